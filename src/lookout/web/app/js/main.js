// Start the page: who is signed in, then the view of the address's #fragment:
// #/ (home: typeable at once), #/new, #/chat/<id>, #/watches, #/watches/<id> (a watch's
// history), #/settings.

import { onSignedOut } from "./api.js";
import { renderAuth } from "./auth.js";
import { ChatView } from "./chat.js";
import { isConsent, renderConsent } from "./consent.js";
import { h, replace } from "./dom.js";
import { HistoryView } from "./history.js";
import { renderSettings } from "./settings.js";
import { renderShell } from "./shell.js";
import { refreshChats, refreshMe, state } from "./state.js";
import { WatchesView } from "./watches.js";

const root = document.getElementById("app");
let shell = null;
let view = null;
let pending = null; // what was typed on the home screen, sent by the new chat it opens

function navigate(hash, { replace: replaceEntry = false } = {}) {
  if (replaceEntry) {
    window.history.replaceState(null, "", hash);
    route(true);
  } else {
    window.location.hash = hash;
  }
}

/** The home screen's question box: focused at once; sending it opens a new chat with it. */
function askForm() {
  const input = h("textarea", { id: "home-ask", rows: "2", maxlength: "8000", autofocus: true,
    placeholder: "e.g. watch https://example.com/menu every weekday at 9am" });
  const form = h("form", { class: "home-ask" },
    h("label", { for: "home-ask", class: "visually-hidden" }, "Ask Lookout"), input,
    h("button", { type: "submit", class: "primary" }, "Ask"));
  const submit = () => {
    const text = input.value.trim();
    if (!text) return;
    pending = text;
    navigate("#/new");
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); submit(); }
  });
  window.setTimeout(() => input.focus(), 0);
  return form;
}

function home(main) {
  document.title = "Lookout";
  const watched = state.chats.filter((chat) => chat.watch);
  replace(main, h("div", { class: "home" },
    h("h1", {}, "What should Lookout look at?"),
    h("p", {}, "Ask about any web page and get the answer in plain words, or ask Lookout to keep watch and it will tell you what changed."),
    askForm(),
    h("p", {}, h("a", { class: "button secondary", href: "#/new" }, "Start a new chat"), " ",
      h("a", { class: "button secondary", href: "#/watches" }, "See all watches")),
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
  const historyMatch = hash.match(/^#\/watches\/([0-9a-f-]{36})$/);
  if (view && chatId && view.shows && view.shows(chatId)) {
    shell.setCurrent(chatId);
    return; // a new chat that just got its id: keep the view
  }
  if (view && view.unmount) view.unmount();
  view = null;
  shell.setCurrent(chatId);
  if (hash === "#/watches" || historyMatch) {
    view = historyMatch ? new HistoryView(shell.main, historyMatch[1]) : new WatchesView(shell.main);
    view.mount();
    if (moved) shell.main.focus();
  } else if (chatId || hash === "#/new") {
    const chat = new ChatView(shell.main, chatId, { navigate });
    view = chat;
    const asked = pending;
    pending = null;
    chat.mount().then(() => asked && !chatId && chat.send(asked));
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
