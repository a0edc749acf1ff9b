// The consent page of Lookout's OAuth server (/authorize?…): a signed-in person sees which
// client asks, picks the workspace and what it may do, and allows or denies. The answer
// sends the browser back to the client (with a code, or with access_denied).

import { ApiError, get, post } from "./api.js";
import { h, replace, uid } from "./dom.js";

/** True on the authorization endpoint's page. */
export function isConsent() {
  return window.location.pathname === "/authorize";
}

function card(...children) {
  return h("main", { id: "main", class: "auth", tabindex: "-1" },
    h("div", { class: "auth-card consent" }, h("h1", { class: "brand-title" }, "Lookout"), children));
}

function problem(root, error) {
  const back = error.details && error.details.redirect_to;
  replace(root, card(
    h("h2", {}, "This connection cannot go on"),
    h("p", { class: "error-box", role: "alert" }, error.message),
    back ? h("button", { type: "button", class: "secondary", onclick: () => window.location.assign(back) },
      "Go back to the app") : null));
  root.setAttribute("aria-busy", "false");
}

function workspacePicker(workspaces) {
  const id = uid("workspace");
  const select = h("select", { id, name: "workspace" },
    workspaces.map((w) => h("option", { value: w.id }, `${w.name} (${w.role})`)));
  return [h("div", { class: "field" }, h("label", { for: id }, "Workspace it works in"), select), select];
}

function scopeChoices(scopes) {
  const boxes = scopes.map((scope) => {
    const id = uid("scope");
    const box = h("input", { id, type: "checkbox", name: "scope", value: scope.name, checked: true });
    return [box, h("div", { class: "scope-choice" }, box,
      h("label", { for: id }, h("strong", {}, scope.name), " — ", scope.description))];
  });
  return [h("fieldset", { class: "scopes" }, h("legend", {}, "It may"), boxes.map(([, row]) => row)),
    boxes.map(([box]) => box)];
}

function view(root, asked, query) {
  const { client } = asked;
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const [picker, select] = workspacePicker(asked.workspaces);
  const [fieldset, boxes] = scopeChoices(asked.scopes);
  const allow = h("button", { type: "submit", class: "primary" }, "Allow");
  const deny = h("button", { type: "button", class: "secondary" }, "Deny");

  async function answer(allowed) {
    error.hidden = true;
    const scopes = boxes.filter((box) => box.checked).map((box) => box.value);
    if (allowed && !scopes.length) {
      error.textContent = "Tick at least one thing it may do, or deny.";
      error.hidden = false;
      return;
    }
    allow.disabled = deny.disabled = true;
    try {
      const body = { query, allow: allowed, workspace_id: select.value, scopes };
      const { redirect_to: target } = await post("/api/oauth/authorize", body);
      replace(root, card(h("p", { role: "status" }, allowed ? `Connected. Going back to ${asked.redirect_host}…` : "Denied. Going back…")));
      window.location.assign(target);
    } catch (failure) {
      if (failure instanceof ApiError && failure.details && failure.details.redirect_to) {
        problem(root, failure);
        return;
      }
      error.textContent = failure instanceof ApiError ? failure.message : "Something went wrong.";
      error.hidden = false;
      allow.disabled = deny.disabled = false;
    }
  }

  const form = h("form", { class: "consent-form" }, picker, fieldset, error,
    h("div", { class: "form-actions" }, allow, deny));
  form.addEventListener("submit", (event) => { event.preventDefault(); answer(true); });
  deny.addEventListener("click", () => answer(false));
  replace(root, card(
    h("h2", {}, `Connect ${client.name}?`),
    h("p", {}, h("strong", { class: "client-name" }, client.name), " asks to use Lookout as ",
      h("strong", {}, asked.user.email), "."),
    client.uri ? h("p", { class: "meta" }, "About it: ", h("code", {}, client.uri)) : null,
    h("p", { class: "meta" }, client.verified_by_url
      ? ["Its identity is the address ", h("code", {}, client.id), "."]
      : "Lookout cannot check who made this app: allow it only if you just started connecting it yourself.",
    " After you answer you go back to ", h("code", {}, asked.redirect_host), "."),
    form,
    h("p", { class: "meta" }, "You can disconnect it any time in Settings → Connected agents.")));
  root.setAttribute("aria-busy", "false");
  document.title = `Connect ${client.name} · Lookout`;
  allow.focus();
}

/** Show the consent step in `root`; `signIn(then)` shows the sign-in form first. */
export async function renderConsent(root, signIn) {
  const query = window.location.search.replace(/^\?/, "");
  try {
    const asked = await get(`/api/oauth/authorize?${query}`);
    view(root, asked, query);
  } catch (error) {
    if (error instanceof ApiError && error.code === "unauthenticated") {
      signIn(() => renderConsent(root, signIn));
      return;
    }
    problem(root, error instanceof ApiError ? error : new ApiError("Something went wrong."));
  }
}
