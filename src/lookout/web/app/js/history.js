// A watch's history (#/watches/<id>): its checks (time, changed or not, condition, credits),
// and for any check the page (or a search's, a maps search's results) as it was then and what
// changed against the previous check or any other check picked, as before → after.

import { get } from "./api.js";
import { fromNow, h, replace, timeEl, uid } from "./dom.js";

const STATUS = { succeeded: "Done", failed: "Failed", skipped: "Skipped", queued: "Queued", running: "Running" };

function checkLabel(check) {
  return `${new Date(check.checked_at || check.scheduled_for).toLocaleString()}${check.changed ? " · changed" : ""}`;
}

function diffList(diff) {
  if (!diff) return h("p", { class: "meta" }, "Nothing to compare with: this is the first check kept.");
  if (!diff.changed) return h("p", { class: "meta no-change" }, "No change between these checks.");
  const items = [
    ...diff.modified.map((c) => h("li", { class: "diff-modified" },
      h("del", {}, c.before ?? "(earlier text not kept)"), h("span", { "aria-hidden": "true" }, " → "),
      h("span", { class: "visually-hidden" }, " became "), h("ins", {}, c.after ?? ""))),
    ...diff.added.map((text) => h("li", { class: "diff-added" }, text)),
    ...diff.removed.map((text) => h("li", { class: "diff-removed" }, text)),
    ...diff.moved.map((c) => h("li", { class: "diff-moved" }, `↕ ${c.after ?? ""}`)),
  ];
  const counts = diff.counts;
  return [h("p", { class: "meta" },
    `${counts.modified} modified, ${counts.added} added, ${counts.removed} removed, ${counts.moved} moved`),
  h("ul", { class: "diff history-diff" }, items)];
}

export class HistoryView {
  constructor(root, watchId) {
    this.root = root;
    this.watchId = watchId;
    this.checks = [];
    this.detail = h("section", { class: "card check-detail", "aria-live": "polite" });
  }

  async mount() {
    document.title = "History · Lookout";
    replace(this.root, h("div", { class: "watches history-view" }, h("p", { class: "meta" }, "Loading the history…")));
    try {
      const data = await get(`/api/automations/${this.watchId}/history?limit=200`);
      this.checks = data.checks;
      this.draw(data);
    } catch (error) {
      replace(this.root, h("div", { class: "watches" },
        h("p", { class: "error-box", role: "alert" }, error.message),
        h("a", { href: "#/watches" }, "Back to the watches")));
    }
  }

  draw(data) {
    const watch = data.watch;
    replace(this.root, h("div", { class: "watches history-view" },
      h("p", {}, h("a", { href: "#/watches" }, "← Watches")),
      h("h1", {}, "History"),
      h("p", {}, h("q", {}, watch.message)),
      h("p", { class: "meta" }, `Checked ${watch.schedule}`, watch.schedule.includes(watch.timezone) ? "" : ` (${watch.timezone})`,
        " · ", h("a", { href: `#/chat/${watch.chat_id}` }, "Open its chat")),
      data.pruned ? h("p", { class: "notice pruned", "data-testid": "pruned" }, data.pruned.text) : null,
      this.checks.length ? this.table() : h("p", { class: "meta" }, "No checks yet. The first one runs at the next check time, or press Run now on the watches page."),
      this.detail));
    const first = this.checks.find((c) => c.pages > 0);
    if (first) this.open(first.id, null);
  }

  table() {
    return h("div", { class: "table-wrap" }, h("table", { class: "check-table" },
      h("caption", { class: "visually-hidden" }, "Checks of this watch, newest first"),
      h("thead", {}, h("tr", {}, ["Checked", "Kind", "Status", "Changed", "Condition", "Credits", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, this.checks.map((check) => h("tr", { dataset: { id: check.id }, class: "check-row" },
        h("td", { "data-label": "Checked" }, timeEl(check.checked_at || check.scheduled_for), h("br"),
          h("small", { class: "meta" }, fromNow(check.checked_at || check.scheduled_for))),
        h("td", { "data-label": "Kind" }, check.manual ? "Run now" : "Scheduled"),
        h("td", { "data-label": "Status" }, h("span", { class: `badge status-${check.status}`, title: check.error || "" }, STATUS[check.status] || check.status)),
        h("td", { "data-label": "Changed" }, check.compared ? (check.changed ? h("strong", {}, "Changed") : "No change") : "First look"),
        h("td", { "data-label": "Condition" }, check.condition_met === null ? "—" : check.condition_met ? "Met" : "Not met"),
        h("td", { "data-label": "Credits", class: "num" }, check.credits ?? "—"),
        h("td", {}, check.pages ? h("button", { type: "button", class: "secondary small",
          onclick: () => this.open(check.id, null) }, "View") : h("span", { class: "meta" }, "Nothing kept")))))));
  }

  async open(checkId, against) {
    replace(this.detail, h("p", { class: "meta" }, "Loading the check…"));
    try {
      const query = against ? `?against=${encodeURIComponent(against)}` : "";
      const data = await get(`/api/automations/${this.watchId}/history/${checkId}${query}`);
      this.drawDetail(data);
    } catch (error) {
      replace(this.detail, h("p", { class: "error-box", role: "alert" }, error.message));
    }
  }

  drawDetail(data) {
    const pick = uid("against");
    const others = this.checks.filter((c) => c.id !== data.check.id && c.pages > 0);
    const select = h("select", { id: pick },
      others.map((c) => h("option", { value: c.id, selected: data.against && data.against.id === c.id }, checkLabel(c))));
    if (!data.against) select.prepend(h("option", { value: "", selected: true }, "—"));
    select.addEventListener("change", () => select.value && this.open(data.check.id, select.value));
    replace(this.detail,
      h("h2", {}, "Check of ", timeEl(data.check.checked_at || data.check.scheduled_for)),
      others.length ? h("div", { class: "field compare-with" }, h("label", { for: pick }, "Compare with"), select) : null,
      data.against ? h("p", { class: "meta" }, "Changes since the check of ", timeEl(data.against.checked_at || data.against.scheduled_for), ":") : null,
      data.pages.map((page) => h("article", { class: `check-page kind-${page.kind}` },
        h("h3", {}, page.title || page.url),
        page.kind === "items" ? null : h("p", { class: "meta url" }, page.url),
        h("div", { class: "what-changed", "data-testid": "diff" }, diffList(page.diff)),
        h("details", { class: "page-then" },
          h("summary", {}, page.kind === "items" ? "The results as they were then" : "The page as it was then"),
          h("pre", { class: "page-content" }, page.content)))));
  }
}
