// Start the page: who is signed in, then the view of the address's #fragment:
// #/ (home), #/new, #/chat/<id>, #/settings.

import { onSignedOut } from "./api.js";
import { renderAuth } from "./auth.js";
import { ChatView } from "./chat.js";
import { isConsent, renderConsent } from "./consent.js";
import { h, replace } from "./dom.js";
import { renderSettings } from "./settings.js";
import { renderShell } from "./shell.js";
import { refreshChats, refreshMe, state } from "./state.js";

const root = document.getElementById("app");
let shell = null;
let view = null;

function navigate(hash, { replace: replaceEntry = false } = {}) {
  if (replaceEntry) {
    window.history.replaceState(null, "", hash);
    route(true);
  } else {
    window.location.hash = hash;
  }
}

function home(main) {
  document.title = "Lookout";
  const watched = state.chats.filter((chat) => chat.watch);
  replace(main, h("div", { class: "home" },
    h("h1", {}, "What should Lookout look at?"),
    h("p", {}, "Ask about any web page and get the answer in plain words, or ask Lookout to keep watch and it will tell you what changed."),
    h("a", { class: "button primary", href: "#/new" }, "Start a new chat"),
    watched.length ? [h("h2", {}, "Watching"), h("ul", { class: "watch-list" }, watched.map((chat) =>
      h("li", {}, h("a", { href: `#/chat/${chat.id}` }, chat.title || "Untitled chat"),
        h("span", { class: "meta" }, ` — ${chat.watch.schedule}`))))] : null));
}

/** Show the view of the address; `moved`: the person navigated (focus follows the new view). */
function route(moved = false) {
  if (!shell) return;
  const hash = window.location.hash || "#/";
  const chatMatch = hash.match(/^#\/chat\/([0-9a-f-]{36})$/);
  const chatId = chatMatch ? chatMatch[1] : null;
  if (view && chatId && view.shows && view.shows(chatId)) {
    shell.setCurrent(chatId);
    return; // a new chat that just got its id: keep the view
  }
  if (view && view.unmount) view.unmount();
  view = null;
  shell.setCurrent(chatId);
  if (chatId || hash === "#/new") {
    view = new ChatView(shell.main, chatId, { navigate });
    view.mount();
  } else if (hash === "#/settings") {
    renderSettings(shell.main);
    if (moved) shell.main.focus();
  } else {
    home(shell.main);
    if (moved) shell.main.focus();
  }
}

async function signedIn() {
  await refreshMe();
  shell = renderShell(root, { onSignOut: signedOut });
  await refreshChats();
  route();
}

function signedOut() {
  if (view && view.unmount) view.unmount();
  view = null;
  shell = null;
  state.me = null;
  state.chats = [];
  renderAuth(root, signedIn);
}

window.addEventListener("hashchange", () => route(true));
// The address's #fragment is the route, so the skip link moves focus instead of navigating.
document.querySelector(".skip-link").addEventListener("click", (event) => {
  event.preventDefault();
  const main = document.getElementById("main");
  if (main) main.focus();
});
onSignedOut(() => {
  if (shell) signedOut();
});

async function start() {
  if (isConsent()) {
    // The OAuth consent step: sign in first when needed, then answer the client.
    await renderConsent(root, (then) => renderAuth(root, then));
    return;
  }
  try {
    await signedIn();
  } catch (error) {
    if (error.code === "unauthenticated") {
      signedOut();
      return;
    }
    replace(root, h("main", { id: "main", class: "auth" }, h("div", { class: "auth-card" },
      h("h1", {}, "Lookout"),
      h("p", { class: "error-box", role: "alert" }, error.message),
      h("button", { type: "button", class: "primary", onclick: () => window.location.reload() }, "Try again"))));
  }
}

start();
