// "Tell me when…": the proposal of a watch (Start / Change / Cancel) and a run's verdict.

import { h } from "./dom.js";

function valueText(value, condition) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.join("; ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  const unit = condition && condition.unit;
  const symbols = { EUR: " €", USD: "$", GBP: "£", "%": " %" };
  if (unit === "USD" || unit === "GBP") return `${symbols[unit]}${value}`;
  return `${value}${unit ? symbols[unit] || ` ${unit}` : ""}`;
}

/** The card of a `data-watch-proposal` part; its buttons answer only on the latest message. */
export function proposalCard(data, context) {
  if (data.status === "started") return h("p", { class: "notice watch-notice" }, "Watch started.");
  if (data.status === "cancelled") return h("p", { class: "notice watch-notice" }, "Not watching.");
  if (data.status !== "proposed") return null;
  const facts = h("dl", { class: "proposal-facts" },
    h("dt", {}, "Page"), h("dd", {}, data.title || (data.urls || [])[0] || ""),
    h("dt", {}, "Tell you when"), h("dd", {}, data.condition_words || "anything changes"),
    h("dt", {}, "Checks"), h("dd", {}, `${data.schedule}${data.schedule.includes(data.timezone) ? "" : ` (${data.timezone})`}`),
    h("dt", {}, "Now"), h("dd", {}, data.found ? valueText(data.current, data.condition) : "not found on the page"));
  const card = h("section", { class: "card proposal", "aria-label": "Proposed watch" }, facts,
    data.note ? h("p", { class: "meta" }, data.note) : null);
  if (!context.canReply) return card;
  const change = h("form", { class: "proposal-change", hidden: true },
    h("label", {}, "What to change ", h("input", { name: "change", placeholder: "hourly, or below 45", maxlength: "200" })),
    h("button", { type: "submit", class: "secondary small" }, "Update"));
  change.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = change.elements.change.value.trim();
    if (text) context.send(text);
  });
  const start = h("button", { type: "button", class: "primary small", onclick: () => context.send("yes") }, "Start");
  const edit = h("button", { type: "button", class: "secondary small", onclick: () => {
    change.hidden = false;
    change.elements.change.focus();
  } }, "Change");
  const cancel = h("button", { type: "button", class: "secondary small", onclick: () => context.send("cancel") }, "Cancel");
  card.append(h("div", { class: "quick-replies", role: "group", "aria-label": "Answer the proposal" }, start, edit, cancel), change);
  return card;
}

/** A scheduled run's verdict on its condition (`data-condition`). */
export function verdictLine(data) {
  const state = data.met === null ? "Could not read" : data.met ? "Met" : "Not met";
  return h("p", { class: `notice verdict verdict-${data.met === null ? "lost" : data.met ? "met" : "unmet"}` },
    h("strong", {}, state), ` · ${data.words || ""} · now ${valueText(data.value, data.condition)}`,
    data.previous !== null && data.previous !== undefined ? ` (was ${valueText(data.previous, data.condition)})` : "");
}

export { valueText };
