// The frame around every view: the top bar (workspace, credits, settings, sign out) and the
// list of chats (watched ones marked with their cadence).

import { post } from "./api.js";
import { h, replace, uid } from "./dom.js";
import { chooseWorkspace, on, state } from "./state.js";

const PHONE = window.matchMedia("(max-width: 760px)");

function workspaceBox(me) {
  const ws = me.workspace;
  const balance = h("span", { class: "balance", "data-testid": "balance" },
    h("span", { class: "balance-number" }, ws.balance.toLocaleString()), " credits");
  if (me.workspaces.length < 2) {
    return h("div", { class: "workspace" },
      h("span", { class: "workspace-name", title: `Your role: ${ws.role}` }, ws.name), balance);
  }
  const id = uid("workspace");
  const select = h("select", { id }, me.workspaces.map((w) =>
    h("option", { value: w.id, selected: w.id === ws.id }, w.name)));
  select.addEventListener("change", () => {
    chooseWorkspace(select.value);
    window.location.hash = "#/";
    window.location.reload();
  });
  return h("div", { class: "workspace" },
    h("label", { for: id, class: "visually-hidden" }, "Workspace"), select, balance);
}

function chatItem(chat, currentId) {
  const watch = chat.watch;
  return h("li", { class: "chat-item" },
    h("a", { href: `#/chat/${chat.id}`, "aria-current": chat.id === currentId ? "page" : null },
      h("span", { class: "chat-title" }, chat.title || "Untitled chat"),
      watch ? h("span", { class: "badge watch", title: `Watched ${watch.schedule}` },
        h("span", { "aria-hidden": "true" }, "● "), `Watched · ${watch.schedule}`) : null));
}

/** Build the shell in `root`; returns {main, setCurrent(chatId)}; signOut() is called after. */
export function renderShell(root, { onSignOut }) {
  const header = h("header", { class: "topbar" });
  const list = h("ul", { class: "chat-list" });
  const toggle = h("button", { type: "button", class: "secondary small menu-toggle",
    "aria-controls": "sidebar", "aria-expanded": "false" }, "Chats");
  const sidebar = h("nav", { id: "sidebar", class: "sidebar", "aria-label": "Chats" },
    h("a", { class: "button primary new-chat", href: "#/new" }, "+ New chat"),
    h("h2", { class: "sidebar-heading" }, "Your chats"),
    list);
  const main = h("main", { id: "main", class: "view", tabindex: "-1" });
  const backdrop = h("div", { class: "backdrop", hidden: true });
  backdrop.addEventListener("click", () => setOpen(false));
  let current = null;

  function setOpen(open) {
    sidebar.classList.toggle("open", open);
    backdrop.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
  }
  toggle.addEventListener("click", () => {
    const open = !sidebar.classList.contains("open");
    setOpen(open);
    if (open) sidebar.querySelector("a").focus();
  });
  sidebar.addEventListener("click", (event) => {
    if (event.target.closest("a") && PHONE.matches) setOpen(false);
  });
  sidebar.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && PHONE.matches) {
      setOpen(false);
      toggle.focus();
    }
  });

  const signOut = h("button", { type: "button", class: "secondary small" }, "Sign out");
  signOut.addEventListener("click", async () => {
    signOut.disabled = true;
    try {
      await post("/api/auth/logout");
    } finally {
      onSignOut();
    }
  });

  const drawHeader = () => replace(header,
    toggle,
    h("a", { class: "brand", href: "#/" }, "Lookout"),
    state.me ? workspaceBox(state.me) : null,
    h("div", { class: "topbar-actions" },
      h("a", { class: "button secondary small", href: "#/watches" }, "Watches"),
      h("a", { class: "button secondary small", href: "#/settings" }, "Settings"),
      state.me && state.me.user ? h("span", { class: "user-email" }, state.me.user.email) : null,
      signOut));
  const drawList = () => {
    if (!state.chats.length) {
      replace(list, h("li", { class: "meta empty" }, "No chats yet."));
      return;
    }
    replace(list, state.chats.map((chat) => chatItem(chat, current)));
  };

  on("me", drawHeader);
  on("chats", drawList);
  drawHeader();
  drawList();
  replace(root, header, h("div", { class: "layout" }, sidebar, backdrop, main));
  root.setAttribute("aria-busy", "false");
  return {
    main,
    setCurrent(chatId) {
      current = chatId;
      drawList();
    },
  };
}
