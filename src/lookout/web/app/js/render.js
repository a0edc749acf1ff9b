// One message of a chat as DOM: text, tool cards, job progress, watch notices, errors.

import { h, timeEl, fromNow } from "./dom.js";
import { jobProgress, toolCard } from "./cards.js";
import { shownParts } from "./messages.js";
import { proposalCard, verdictLine } from "./proposal.js";
import { rich } from "./text.js";

const ERROR_HINTS = {
  insufficient_credits: "Your workspace is out of credits.",
  busy: "Lookout is still answering in this chat.",
  rate_limited: "Too many requests just now.",
  turn_lost: "The answer was interrupted.",
};

function watchNotice(data) {
  if (data.event === "started") {
    return h("p", { class: "notice watch-notice" },
      `Watching ${data.schedule}.`,
      data.next_run_at ? ` Next check ${fromNow(data.next_run_at)}.` : "");
  }
  if (data.event === "stopped") return h("p", { class: "notice watch-notice" }, "Stopped watching.");
  if (data.event === "run") return h("p", { class: "notice watch-notice" }, "A check was queued.");
  if (data.event === "paused") return h("p", { class: "notice watch-notice" }, "Watch paused.");
  if (data.event === "resumed") return h("p", { class: "notice watch-notice" }, `Watching again ${data.schedule}.`);
  if (data.event === "edited") return h("p", { class: "notice watch-notice" }, `Watch changed: ${data.schedule}.`);
  return null;
}

function clarify(data, context) {
  if (!context.canReply) return null;
  return h("div", { class: "quick-replies", role: "group", "aria-label": "Answer the question" },
    h("button", { type: "button", class: "secondary small", onclick: () => context.send("Just this once") },
      "Just this once"),
    h("button", { type: "button", class: "secondary small", onclick: () => context.send("Keep watching it daily") },
      "Keep watching it"));
}

function errorBox(part) {
  const hint = ERROR_HINTS[part.code];
  const text = part.errorText || "Something went wrong.";
  return h("p", { class: "error-box", role: "alert" },
    hint && !text.startsWith(hint) ? `${hint} ${text}` : text);
}

function partView(part, context) {
  if (part.type === "text") {
    return h("div", { class: `text${part.state === "streaming" ? " streaming" : ""}` }, rich(part.text));
  }
  if (part.type.startsWith("tool-")) return toolCard(part, context.openCards);
  if (part.type === "data-job") return jobProgress(part.data || {});
  if (part.type === "data-watch") return watchNotice(part.data || {});
  if (part.type === "data-clarify") return clarify(part.data || {}, context);
  if (part.type === "data-watch-proposal") return proposalCard(part.data || {}, context);
  if (part.type === "data-condition") return verdictLine(part.data || {});
  if (part.type === "error") return errorBox(part);
  return null;
}

/**
 * The element of one message. `context`: {openCards: Set, canReply: bool, send(text)}.
 * A scheduled check's question shows as a marker, not as something the person said.
 */
export function messageView(message, context) {
  const scheduled = message.source === "automation";
  if (message.role === "user") {
    const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    if (scheduled) {
      return h("li", { class: "message scheduled-marker", dataset: { id: message.id } },
        h("span", {}, message.manual ? "Check you asked for" : "Scheduled check"), " · ", timeEl(message.created_at), " · ", h("q", {}, text));
    }
    return h("li", { class: "message user", dataset: { id: message.id } },
      h("h3", { class: "visually-hidden" }, "You said"),
      h("div", { class: "bubble" }, rich(text)));
  }
  const parts = shownParts(message.parts).map((part) => partView(part, context)).filter(Boolean);
  if (message.live && !message.finished && !message.parts.some((p) => p.type === "text")) {
    parts.push(h("p", { class: "meta thinking" }, "Working on it…"));
  }
  return h("li", { class: `message assistant${scheduled ? " from-watch" : ""}`,
    dataset: { id: message.id, live: message.live && !message.finished ? "true" : "false" } },
  h("h3", { class: "visually-hidden" }, scheduled ? "Lookout, on a scheduled check" : "Lookout said"),
  scheduled && !context.afterMarker ? h("p", { class: "meta badge-line" }, h("span", { class: "badge watch" }, "Watch"),
    message.manual ? " Check you asked for " : " Scheduled check ", timeEl(message.created_at)) : null,
  h("div", { class: "bubble" }, parts));
}
