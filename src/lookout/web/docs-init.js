// Loaded as a file (never inline) so the page can keep a strict Content-Security-Policy.
window.addEventListener("load", () => {
  window.SwaggerUIBundle({ url: "/v1/openapi.json", dom_id: "#docs", deepLinking: true });
});
