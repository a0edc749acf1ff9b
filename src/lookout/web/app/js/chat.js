// The chat view: messages, the composer, a turn streaming in, live updates from scheduled turns,
// and the watch panel of a watched chat.

import { ApiError, del, get, patch, post } from "./api.js";
import { announce, h, replace, uid } from "./dom.js";
import { Feed } from "./messages.js";
import { messageView } from "./render.js";
import { LiveStream, open, parts } from "./sse.js";
import { canEdit, refreshChats, refreshMe } from "./state.js";
import { WatchPanel } from "./watch.js";
import { messageBody } from "./zone.js";

const PAGE = 200;
const RESUME_TRIES = 8;
const NEAR_BOTTOM_PX = 120;

const sleep = (ms) => new Promise((resolve) => { window.setTimeout(resolve, ms); });

/** The stream's own outage (an error part without an event id: the server lost its event
 * stream while it read it), not the turn's: the turn goes on server-side, so resume. */
const streamAway = (id, part) =>
  (!id || id === "0-0") && part.type === "error" && part.code === "unavailable";

class StreamAway extends Error {}

export class ChatView {
  /** chatId null: a new chat, created when the first message is sent. */
  constructor(root, chatId, { navigate }) {
    this.root = root;
    this.chatId = chatId;
    this.navigate = navigate;
    this.chat = null;
    this.stored = [];
    this.extra = []; // messages not stored yet: the one just sent, the answer streaming in
    this.openCards = new Set();
    this.feed = new Feed((message, part) => this.onPart(message, part));
    this.tail = null;
    this.watchPanel = null;
    this.closed = false;
    this.sending = false;
    // While this view reads a turn's own stream, the tail's copies of its parts are left out:
    // two sources could interleave out of order; the turn's stream alone is complete.
    this.following = 0;
    this.build();
  }

  build() {
    const inputId = uid("message");
    this.title = h("h1", { class: "chat-title", id: "chat-title" }, "New chat");
    this.actions = h("div", { class: "chat-actions" });
    this.header = h("header", { class: "chat-header" }, this.title, this.actions);
    this.watchSlot = h("div", { class: "watch-slot" });
    this.connection = h("p", { class: "connection", role: "status", hidden: true });
    this.log = h("ol", { class: "messages", role: "log", "aria-live": "off",
      "aria-labelledby": "chat-title" });
    this.scroller = h("div", { class: "scroller" }, this.log);
    this.input = h("textarea", { id: inputId, name: "text", rows: 2, maxlength: 8000, required: true,
      placeholder: "Ask about a page, or “watch https://… every day”",
      "aria-describedby": `${inputId}-hint` });
    this.sendButton = h("button", { type: "submit", class: "primary" }, "Send");
    this.formError = h("p", { class: "error-box", role: "alert", hidden: true });
    this.form = h("form", { class: "composer" },
      this.formError,
      h("label", { for: inputId, class: "visually-hidden" }, "Message"),
      h("div", { class: "composer-row" }, this.input, this.sendButton),
      h("p", { id: `${inputId}-hint`, class: "meta hint" },
        "Enter sends; Shift+Enter starts a new line."));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    replace(this.root, h("section", { class: "chat", "aria-labelledby": "chat-title" },
      this.header, this.watchSlot, this.connection, this.scroller, this.form));
  }

  async mount() {
    if (!this.chatId) {
      document.title = "New chat · Lookout";
      replace(this.log, h("li", { class: "empty-chat" },
        h("p", {}, "Ask about any web page — “what is on https://example.com right now?”"),
        h("p", {}, "Or ask Lookout to keep watch — “watch https://example.com/prices every day” — and it will tell you what changed.")));
      this.updateComposer();
      this.input.focus();
      return;
    }
    try {
      await Promise.all([this.loadChat(), this.loadMessages()]);
    } catch (error) {
      replace(this.log, h("li", { class: "error-box", role: "alert" }, error.message));
      return;
    }
    this.input.focus();
    // A turn started before a reload is picked up again, then the chat's live tail takes over.
    const lastId = await this.resume(null);
    if (!this.closed) this.startTail(lastId);
  }

  unmount() {
    this.closed = true;
    if (this.tail) this.tail.stop();
  }

  /** Keep this view when the router lands on the chat it already shows. */
  shows(chatId) {
    return this.chatId === chatId;
  }

  // ---- loading -------------------------------------------------------------------------

  async loadChat() {
    this.chat = await get(`/api/chats/${this.chatId}`);
    this.drawHeader();
    this.drawWatch();
  }

  async loadMessages() {
    const found = [];
    let after = 0;
    for (let page = 0; page < 50; page += 1) {
      const data = await get(`/api/chats/${this.chatId}/messages?after=${after}&limit=${PAGE}`);
      found.push(...data.messages);
      if (data.next_after === null || data.next_after === undefined) break;
      after = data.next_after;
    }
    this.stored = found;
    const storedIds = new Set(found.map((m) => m.id));
    this.extra = this.feed.responding
      ? this.extra.filter((m) => !storedIds.has(m.id) && (m.live || m.role === "user"))
      : [];
    this.drawMessages();
  }

  /** After a turn: the stored messages, the watch, the list and the balance. */
  async refreshAll() {
    if (this.closed || !this.chatId) return;
    await Promise.allSettled([this.loadMessages(), this.loadChat(), refreshChats(), refreshMe()]);
  }

  // ---- drawing -------------------------------------------------------------------------

  drawHeader() {
    const chat = this.chat;
    this.title.textContent = chat.title || "Untitled chat";
    document.title = `${chat.title || "Chat"} · Lookout`;
    const rename = h("button", { type: "button", class: "secondary small", disabled: !canEdit() }, "Rename");
    const remove = h("button", { type: "button", class: "secondary small danger", disabled: !canEdit() }, "Delete");
    rename.addEventListener("click", () => this.startRename());
    remove.addEventListener("click", () => this.remove(remove));
    replace(this.actions, rename, remove);
  }

  drawWatch() {
    if (!this.chat.watch) {
      const stopped = this.watchPanel !== null;
      this.watchPanel = null;
      replace(this.watchSlot, stopped
        ? h("p", { class: "notice watch-notice stopped", role: "status" },
          "Stopped watching: this is a normal chat again.")
        : null);
      return;
    }
    if (this.watchPanel && this.watchPanel.watch.id === this.chat.watch.id) {
      this.watchPanel.update(this.chat);
      return;
    }
    this.watchPanel = new WatchPanel(this.chat, { onChanged: () => this.refreshAll() });
    replace(this.watchSlot, this.watchPanel.el);
  }

  context() {
    return { openCards: this.openCards, canReply: canEdit() && !this.busy, send: (text) => this.send(text) };
  }

  visibleMessages() {
    const storedIds = new Set(this.stored.map((m) => m.id));
    return [...this.stored, ...this.extra.filter((m) => !storedIds.has(m.id))];
  }

  drawMessages() {
    const messages = this.visibleMessages();
    const stick = this.nearBottom();
    const context = this.context();
    const lastIndex = messages.length - 1;
    replace(this.log, messages.length
      ? messages.map((m, i) => messageView(m, { ...context, canReply: context.canReply && i === lastIndex,
        afterMarker: i > 0 && messages[i - 1].role === "user" && messages[i - 1].source === "automation" }))
      : h("li", { class: "empty-chat" }, h("p", {}, "No messages yet. Ask something below.")));
    if (stick) this.scrollToEnd();
    this.updateComposer();
  }

  /** Redraw one live message in place (a streaming answer redraws many times a second). */
  drawMessage(message) {
    const stick = this.nearBottom();
    const fresh = messageView(message, this.context());
    const existing = [...this.log.children].find((li) => li.dataset.id === message.id);
    if (existing) existing.replaceWith(fresh);
    else {
      const empty = this.log.querySelector(".empty-chat");
      if (empty) empty.remove();
      this.log.append(fresh);
    }
    if (stick) this.scrollToEnd();
  }

  nearBottom() {
    const el = this.scroller;
    return el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  get busy() {
    return this.sending || this.feed.responding;
  }

  updateComposer() {
    const editable = canEdit();
    this.input.disabled = !editable;
    this.sendButton.disabled = !editable || this.busy;
    this.sendButton.textContent = this.busy ? "Answering…" : "Send";
    if (!editable) this.input.placeholder = "You can read this workspace's chats; only editors can write.";
  }

  setConnection(text) {
    this.connection.hidden = !text;
    this.connection.textContent = text || "";
  }

  // ---- live parts ----------------------------------------------------------------------

  onPart(message, part) {
    if (this.closed) return;
    if (!this.extra.includes(message)) {
      this.extra.push(message);
      if (message.source === "automation") announce("A scheduled check is running in this chat.");
    }
    this.drawMessage(message);
    this.updateComposer();
    if (part.type === "data-watch") {
      this.loadChat().catch(() => {});
      refreshChats().catch(() => {});
    }
    if (part.type === "finish" || part.type === "error") {
      announce(part.type === "error" ? "The answer stopped with an error." : "Lookout answered.");
      this.refreshAll();
    }
  }

  startTail(lastEventId) {
    this.tail = new LiveStream(`/api/chats/${this.chatId}/events`, {
      lastEventId,
      onPart: (id, part) => {
        if (!this.following) this.feed.accept(id, part);
      },
      onState: (status, error) => {
        if (status === "reconnecting") this.setConnection("Connection lost — reconnecting…");
        else if (status === "live") this.setConnection(null);
        else if (error) this.setConnection(`Live updates stopped: ${error.message}`);
      },
    }).start();
  }

  /**
   * Follow the chat's turn in flight (GET /stream) from `lastEventId`, retrying when the network
   * drops, until it ends. Returns the id of the last event seen.
   */
  async resume(lastEventId) {
    this.following += 1;
    try {
      return await this.follow(lastEventId);
    } finally {
      this.following -= 1;
    }
  }

  async follow(lastEventId) {
    let lastId = lastEventId;
    for (let attempt = 0; attempt < RESUME_TRIES && !this.closed; attempt += 1) {
      try {
        const response = await open("GET", `/api/chats/${this.chatId}/stream`, { lastEventId: lastId });
        if (!response) break; // 204: nothing in flight
        this.setConnection(null);
        for await (const [id, part] of parts(response)) {
          if (streamAway(id, part)) throw new StreamAway(part.errorText);
          if (id && id !== "0-0") lastId = id;
          this.feed.accept(id, part);
        }
        if (!this.feed.responding) break;
      } catch (error) {
        // 503: the service's event stream is away for now; the turn goes on
        if (error instanceof ApiError && error.status >= 400 && error.status !== 503) break;
      }
      this.setConnection("Connection lost — reconnecting…");
      await sleep(Math.min(500 * 2 ** attempt, 8000));
    }
    this.setConnection(null);
    if (this.feed.responding) {
      // Given up on this turn's stream: show what was stored instead of waiting forever.
      this.feed.current = null;
      this.refreshAll();
    }
    return lastId;
  }

  // ---- sending -------------------------------------------------------------------------

  submit() {
    const text = this.input.value.trim();
    if (!text || this.busy) return;
    this.send(text);
  }

  async send(text) {
    if (this.busy) return;
    this.formError.hidden = true;
    this.sending = true;
    this.updateComposer();
    const mine = { id: `local-${Date.now()}`, role: "user", source: "user",
      parts: [{ type: "text", text }], created_at: new Date().toISOString() };
    this.input.value = "";
    try {
      if (!this.chatId) await this.create();
      this.extra.push(mine);
      this.drawMessages();
      this.scrollToEnd();
      await this.stream(text);
    } catch (error) {
      this.extra = this.extra.filter((m) => m !== mine);
      this.drawMessages();
      this.input.value = text;
      this.formError.textContent = error instanceof ApiError ? error.message : "Something went wrong; try again.";
      this.formError.hidden = false;
    } finally {
      this.sending = false;
      this.updateComposer();
      if (!this.closed) this.input.focus();
    }
  }

  async create() {
    const chat = await post("/api/chats", {});
    this.chatId = chat.id;
    this.chat = chat;
    this.drawHeader();
    this.navigate(`#/chat/${chat.id}`, { replace: true });
    this.startTail(null);
    refreshChats().catch(() => {});
  }

  /** POST the message and read the turn's stream; a dropped stream resumes. */
  async stream(text) {
    this.following += 1;
    let lastId = null;
    let away = false;
    try {
      const response = await open("POST", `/api/chats/${this.chatId}/messages`, { body: messageBody(text) });
      try {
        for await (const [id, part] of parts(response)) {
          if (streamAway(id, part)) throw new StreamAway(part.errorText);
          if (id && id !== "0-0") lastId = id;
          this.feed.accept(id, part);
        }
      } catch (error) {
        // the connection dropped mid-answer: the turn goes on server-side; resume below
        away = error instanceof StreamAway;
      }
      if (this.feed.responding || away) await this.resume(lastId);
    } finally {
      this.following -= 1;
    }
  }

  // ---- rename and delete ---------------------------------------------------------------

  startRename() {
    const id = uid("title");
    const input = h("input", { id, value: this.chat.title || "", maxlength: 200, required: true });
    const form = h("form", { class: "rename-form" },
      h("label", { for: id, class: "visually-hidden" }, "Chat title"), input,
      h("button", { type: "submit", class: "primary small" }, "Save"),
      h("button", { type: "button", class: "secondary small", onclick: () => this.drawHeaderBack(form) }, "Cancel"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        this.chat = { ...this.chat, ...(await patch(`/api/chats/${this.chatId}`, { title: input.value.trim() })) };
        this.drawHeaderBack(form);
        announce("Chat renamed.");
        refreshChats();
      } catch (error) {
        input.setCustomValidity(error.message);
        input.reportValidity();
      }
    });
    input.addEventListener("input", () => input.setCustomValidity(""));
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.drawHeaderBack(form);
    });
    this.title.hidden = true;
    this.actions.hidden = true;
    this.header.prepend(form);
    input.focus();
    input.select();
  }

  drawHeaderBack(form) {
    form.remove();
    this.title.hidden = false;
    this.actions.hidden = false;
    this.drawHeader();
    this.actions.querySelector("button").focus();
  }

  async remove(button) {
    if (!window.confirm("Delete this chat, its messages and its watch? This cannot be undone.")) return;
    button.disabled = true;
    try {
      await del(`/api/chats/${this.chatId}`);
      announce("Chat deleted.");
      await refreshChats();
      this.navigate("#/");
    } catch (error) {
      button.disabled = false;
      this.formError.textContent = error.message;
      this.formError.hidden = false;
    }
  }
}
