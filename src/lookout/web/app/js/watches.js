// The watches page (#/watches): every watch of the workspace, sortable and filterable (by text,
// status and tag), with Run now / Pause / Resume / Stop per row and for the selected rows; each
// row opens its chat and shows its tags (an import's, changedetection.io's included).

import { ApiError, get, post } from "./api.js";
import { announce, fromNow, h, replace, timeEl, uid } from "./dom.js";
import { canEdit } from "./state.js";

const STATUS = { ok: "OK", paused: "Paused", failing: "Failing", out_of_credits: "Out of credits" };
const COLUMNS = [
  ["page", "Page"], ["question", "Question"], ["cadence", "Cadence"],
  ["last_checked_at", "Last checked"], ["last_changed_at", "Last changed"],
  ["status", "Status"], ["next_run_at", "Next check"],
];
const EXAMPLES = [
  "Watch https://example.com/menu every weekday at 9am",
  "Tell me when the price on https://shop.example/item drops below 50 €",
  "Keep an eye on https://example.org/jobs and tell me about new items, hourly",
];

function pageName(watch) {
  return watch.page_title || watch.url || watch.message;
}

function sortValue(watch, key) {
  if (key === "page") return pageName(watch).toLowerCase();
  if (key === "question") return watch.message.toLowerCase();
  if (key === "cadence") return watch.schedule;
  if (key === "status") return watch.status;
  return watch[key] || "";
}

/** A time as "3 hours ago" with the exact time beside it, in the viewer's zone. */
function moment(iso, never) {
  if (!iso) return h("span", { class: "meta" }, never);
  return h("span", { class: "moment" }, fromNow(iso), h("br"), h("small", {}, timeEl(iso)));
}

function emptyState() {
  return h("div", { class: "card empty-watches", "data-testid": "watches-empty" },
    h("h2", {}, "No watches yet"),
    h("p", {}, "Ask Lookout to keep an eye on a page in any chat and it will check it on a schedule and tell you what changed. Say, for example:"),
    h("ul", {}, EXAMPLES.map((text) => h("li", {}, h("q", {}, text)))),
    h("p", {}, "No time of day? It checks daily. Times are in your time zone unless you name another (“at 9am Tokyo time”)."),
    h("a", { class: "button primary", href: "#/new" }, "Start a chat"));
}

/** What the page says once `count` checks it queued have ended, `failed` the errors of those
 * that failed (a check that failed is not "done": its watch's badge says Failing). */
function ended(count, failed) {
  if (!failed.length) return count > 1 ? "The checks are done." : "The check is done.";
  if (count === 1) return `The check failed: ${failed[0]}`;
  return `${count - failed.length} of ${count} checks done, ${failed.length} failed: ${failed[0]}`;
}

export class WatchesView {
  constructor(root) {
    this.root = root;
    this.watches = [];
    this.sort = { key: "last_changed_at", descending: true };
    this.filter = "";
    this.status = "";
    this.tag = "";
    this.selected = new Set();
    this.message = h("p", { class: "meta", role: "status", "data-testid": "watches-said" });
    this.said = 0;  // actions so far: what an older one has to say never replaces a newer one's
    this.body = h("div", { class: "watches-body" });
  }

  async mount() {
    document.title = "Watches · Lookout";
    const search = uid("filter");
    const status = uid("status");
    const filterInput = h("input", { id: search, type: "search", placeholder: "Page, address or question", maxlength: "200" });
    filterInput.addEventListener("input", () => { this.filter = filterInput.value.trim().toLowerCase(); this.draw(); });
    const statusSelect = h("select", { id: status },
      h("option", { value: "" }, "Any status"),
      Object.entries(STATUS).map(([value, label]) => h("option", { value }, label)));
    statusSelect.addEventListener("change", () => { this.status = statusSelect.value; this.draw(); });
    const tag = uid("tag");
    this.tagSelect = h("select", { id: tag });
    this.tagSelect.addEventListener("change", () => { this.tag = this.tagSelect.value; this.draw(); });
    this.tagField = h("div", { class: "field", hidden: true }, h("label", { for: tag }, "Tag"), this.tagSelect);
    replace(this.root, h("div", { class: "watches" },
      h("h1", {}, "Watches"),
      h("div", { class: "watch-filters" },
        h("div", { class: "field" }, h("label", { for: search }, "Filter"), filterInput),
        h("div", { class: "field" }, h("label", { for: status }, "Status"), statusSelect),
        this.tagField),
      this.message,
      this.body));
    await this.load();
  }

  async load() {
    try {
      const data = await get("/api/watches");
      this.watches = data.watches;
      const known = new Set(this.watches.map((w) => w.id));
      this.selected = new Set([...this.selected].filter((id) => known.has(id)));
      this.drawTags();
      this.draw();
    } catch (error) {
      replace(this.body, h("p", { class: "error-box", role: "alert" }, error.message));
    }
  }

  /** The tag filter lists every tag of the workspace's watches; hidden when there is none. */
  drawTags() {
    const tags = [...new Set(this.watches.flatMap((w) => w.tags || []))].sort((a, b) => a.localeCompare(b));
    if (this.tag && !tags.includes(this.tag)) this.tag = "";
    replace(this.tagSelect, h("option", { value: "" }, "Any tag"),
      tags.map((tag) => h("option", { value: tag, selected: tag === this.tag }, tag)));
    this.tagField.hidden = !tags.length;
  }

  pickTag(tag) {
    this.tag = tag;
    this.tagSelect.value = tag;
    this.draw();
  }

  shown() {
    const { key, descending } = this.sort;
    const found = this.watches.filter((w) => (!this.status || w.status === this.status) &&
      (!this.tag || (w.tags || []).includes(this.tag)) &&
      (!this.filter || [pageName(w), w.url || "", w.message, w.chat_title, ...(w.tags || [])].join(" ").toLowerCase().includes(this.filter)));
    found.sort((a, b) => {
      const [x, y] = [sortValue(a, key), sortValue(b, key)];
      const order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    return found;
  }

  draw() {
    if (!this.watches.length) {
      replace(this.body, emptyState());
      return;
    }
    const rows = this.shown();
    replace(this.body,
      this.bulkBar(),
      h("div", { class: "table-wrap" }, h("table", { class: "watch-table" },
        h("caption", { class: "visually-hidden" }, "Watches of this workspace"),
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Select")),
          COLUMNS.map(([key, label]) => this.header(key, label)),
          h("th", { scope: "col" }, "Actions"))),
        h("tbody", {}, rows.length ? rows.map((w) => this.row(w))
          : h("tr", {}, h("td", { colspan: String(COLUMNS.length + 2) }, "No watch matches the filter."))))));
  }

  header(key, label) {
    const active = this.sort.key === key;
    const button = h("button", { type: "button", class: "link-button sort" }, label,
      active ? (this.sort.descending ? " ▾" : " ▴") : "");
    button.addEventListener("click", () => {
      this.sort = { key, descending: active ? !this.sort.descending : key.endsWith("_at") };
      this.draw();
    });
    return h("th", { scope: "col", "aria-sort": active ? (this.sort.descending ? "descending" : "ascending") : null }, button);
  }

  row(watch) {
    const pick = h("input", { type: "checkbox", "aria-label": `Select ${pageName(watch)}`, checked: this.selected.has(watch.id) });
    pick.addEventListener("change", () => {
      if (pick.checked) this.selected.add(watch.id); else this.selected.delete(watch.id);
      this.draw();
    });
    return h("tr", { dataset: { id: watch.id, status: watch.status }, class: "watch-row" },
      h("td", { class: "pick" }, pick),
      h("td", { "data-label": "Page" },
        h("a", { href: `#/chat/${watch.chat_id}`, class: "watch-page" }, pageName(watch)),
        watch.url && watch.page_title ? h("div", { class: "meta url" }, watch.url) : null,
        (watch.tags || []).length ? h("ul", { class: "watch-tags", "aria-label": "Tags" },
          watch.tags.map((tag) => h("li", {}, h("button", { type: "button", class: "tag-chip",
            title: `Show only the watches tagged ${tag}`, onclick: () => this.pickTag(tag) }, tag)))) : null),
      h("td", { "data-label": "Question" }, h("q", {}, watch.message),
        watch.condition_words ? h("div", { class: "meta" }, "Tells you when ", watch.condition_words) : null),
      h("td", { "data-label": "Cadence" }, watch.schedule,
        watch.schedule.includes(watch.timezone) ? null : h("div", { class: "meta" }, watch.timezone)),
      h("td", { "data-label": "Last checked", class: "last-checked" }, moment(watch.last_checked_at, "Not yet")),
      h("td", { "data-label": "Last changed", class: "last-changed" }, moment(watch.last_changed_at, "No change yet")),
      h("td", { "data-label": "Status" }, h("span", { class: `badge watch-status-${watch.status}`, title: watch.last_error || "" },
        STATUS[watch.status] || watch.status)),
      h("td", { "data-label": "Next check" }, watch.next_run_at ? moment(watch.next_run_at) : h("span", { class: "meta" }, "—")),
      h("td", { "data-label": "Actions" }, h("div", { class: "row-actions" },
        this.action("Run now", "run", [watch.id], !watch.enabled),
        watch.enabled ? this.action("Pause", "pause", [watch.id]) : this.action("Resume", "resume", [watch.id]),
        this.action("Stop", "stop", [watch.id]),
        h("a", { class: "button secondary small", href: `#/watches/${watch.id}` }, "History"))));
  }

  action(label, action, ids, disabled = false) {
    const button = h("button", { type: "button", class: `secondary small${action === "stop" ? " danger" : ""}`,
      disabled: disabled || !canEdit() || !ids.length }, label);
    button.addEventListener("click", () => this.apply(action, ids, button));
    return button;
  }

  bulkBar() {
    const ids = [...this.selected];
    const all = h("input", { type: "checkbox", id: uid("all"), checked: ids.length > 0 && ids.length === this.watches.length });
    all.addEventListener("change", () => {
      this.selected = all.checked ? new Set(this.shown().map((w) => w.id)) : new Set();
      this.draw();
    });
    return h("div", { class: "bulk-bar", role: "group", "aria-label": "Selected watches" },
      h("label", { class: "select-all" }, all, " Select all"),
      h("span", { class: "meta" }, `${ids.length} selected`),
      this.action("Run now", "run", ids), this.action("Pause", "pause", ids),
      this.action("Resume", "resume", ids), this.action("Stop", "stop", ids));
  }

  /** After Run now: look at each queued check (its run, by id, as the post answered) until
   * none is queued or running, then reload the list and say how they ended. (Read from the list,
   * a check done before the reload after the post was already in it and never seen as new.)
   * Every 1.5 s for a minute, then every 5 s while the page is open: a long check (a slow site,
   * a page that needs the browser, a busy worker) is still followed, and said to be.
   * `said`: the action that queued them; once another was taken, it says nothing. */
  async followRuns(runs, said) {
    let pending = runs;
    const failed = [];  // the error of each check that failed
    for (let look = 1; !this.closed; look += 1) {
      await new Promise((resolve) => { window.setTimeout(resolve, look <= 40 ? 1500 : 5000); });
      // An answered error: the watch or its run is gone (stopped meanwhile), not waited for; no
      // answer (the network, status 0): asked again at the next look.
      const states = await Promise.all(pending.map(({ id, run_id: runId }) =>
        get(`/api/automations/${id}/runs/${runId}`).then((run) => run,
          (error) => ({ status: error instanceof ApiError && error.status ? "gone" : "queued" }))));
      states.forEach((run) => { if (run.status === "failed") failed.push(run.error || "no reason given"); });
      pending = pending.filter((_, k) => ["queued", "running"].includes(states[k].status));
      if (!pending.length) {
        await this.load();
        if (said !== this.said) return;
        this.message.textContent = ended(runs.length, failed);
        announce(this.message.textContent);
        return;
      }
      if (look === 40 && said === this.said) {
        this.message.textContent = `Still checking: ${pending.length} of ${runs.length}.`;
        announce(this.message.textContent);
      }
    }
  }

  unmount() {
    this.closed = true;
  }

  async apply(action, ids, button) {
    if (action === "stop" && !window.confirm(ids.length > 1 ? `Stop ${ids.length} watches?` : "Stop this watch?")) return;
    button.disabled = true;
    this.said += 1;
    const said = this.said;
    try {
      const data = await post("/api/watches/bulk", { action, ids });
      const failed = data.results.filter((r) => !r.ok);
      const done = data.results.length - failed.length;
      const words = { run: "Check queued", pause: "Paused", resume: "Resumed", stop: "Stopped" }[action];
      const told = `${words}: ${done} of ${data.results.length}.` +
        (failed.length ? ` ${failed.map((r) => r.error.message).join(" ")}` : "");
      if (said === this.said) {  // else another action since: its own words stand
        this.message.textContent = told;
        announce(told);
      }
      if (action === "stop") ids.forEach((id) => this.selected.delete(id));
      await this.load();
      const queued = data.results.filter((r) => r.ok && r.run_id);
      if (action === "run" && queued.length) this.followRuns(queued, said);
    } catch (error) {
      this.message.textContent = error instanceof ApiError ? error.message : "That did not work; try again.";
      button.disabled = false;
    }
  }
}
