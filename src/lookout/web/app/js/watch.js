// The watch of a watched chat: cadence, condition and last value, next run, "Run now",
// "Pause" / "Resume", "Edit" (cadence, timezone, condition), "Stop watching", run history.

import { ApiError, del, get, patch, post } from "./api.js";
import { valueText } from "./proposal.js";
import { announce, fromNow, h, replace, timeEl } from "./dom.js";
import { watchNotifications } from "./notifications.js";
import { canEdit } from "./state.js";

const STATUS_WORDS = {
  queued: "Queued",
  running: "Running",
  succeeded: "Done",
  failed: "Failed",
  skipped: "Skipped",
};

function statusBadge(status) {
  return h("span", { class: `badge status-${status}` }, STATUS_WORDS[status] || status || "—");
}

function runRow(run) {
  return h("tr", {},
    h("td", {}, timeEl(run.started_at || run.scheduled_for)),
    h("td", {}, run.manual ? "Run now" : "Scheduled"),
    h("td", {}, statusBadge(run.status)),
    h("td", {}, run.condition_met === null || run.condition_met === undefined ? "" :
      `${run.condition_met ? "met" : "not met"}${run.value !== null ? ` · ${valueText(run.value)}` : ""}`),
    h("td", {}, run.error ? run.error : run.finished_at ? timeEl(run.finished_at) : ""));
}

/**
 * The watch panel of `chat` (which has a watch). onChanged() after a stop or a run request, so
 * the chat and the list can be reloaded.
 */
export class WatchPanel {
  constructor(chat, { onChanged }) {
    this.chat = chat;
    this.onChanged = onChanged;
    this.history = h("div", { class: "run-history" });
    this.message = h("p", { class: "meta", role: "status" });
    this.details = h("details", { class: "history" }, h("summary", {}, "Run history"), this.history);
    this.details.addEventListener("toggle", () => this.details.open && this.loadRuns());
    this.el = h("section", { class: "watch-panel", "aria-labelledby": "watch-heading" });
    this.draw();
  }

  get watch() {
    return this.chat.watch;
  }

  update(chat) {
    this.chat = chat;
    if (this.queued) this.follow(this.queued);
    this.draw();
    if (this.details.open) this.loadRuns();
  }

  // "Check queued" holds while the check it started (run `runId`) is on its way, read from that
  // run itself: a chat update can be computed before the run was inserted (a reload in flight at
  // the click), when the watch's last run is still the one before, finished. Once the run is
  // finished and the chat says so too (its result is shown), the notice goes; a check that
  // failed says why (its chat has no new answer). After a minute of looking, the panel says the
  // check is taking a while and looks no more: the chat's next update looks again.
  async follow(runId) {
    let run = null;  // not known (the run or the watch is gone, no network): the notice goes
    try {
      run = await get(`/api/automations/${this.watch.id}/runs/${runId}`);
    } catch {
      // said by the chat's own reload if it matters
    }
    if (this.queued !== runId) return;  // a newer "Run now" since, or already cleared
    const busy = ["queued", "running"];
    if (run !== null && (busy.includes(run.status) || busy.includes(this.watch.last_run_status))) {
      if (this.rechecks >= 30) {
        this.say("The check is taking a while. Its result will appear in this chat.");
        return;
      }
      // The run is finished just after its answer is stored: look again shortly.
      this.rechecks += 1;
      window.clearTimeout(this.recheck);
      this.recheck = window.setTimeout(() => this.onChanged(), 2000);
      return;
    }
    this.queued = null;
    this.say(run?.status === "failed" ? `The check failed: ${run.error || "no reason given"}` : "");
  }

  draw() {
    const watch = this.watch;
    const runNow = h("button", { type: "button", class: "primary small", disabled: !canEdit() }, "Run now");
    const stop = h("button", { type: "button", class: "secondary small danger", disabled: !canEdit() },
      "Stop watching");
    runNow.addEventListener("click", () => this.runNow(runNow));
    stop.addEventListener("click", () => this.stop(stop));
    const toggle = h("button", { type: "button", class: "secondary small", disabled: !canEdit() },
      watch.enabled === false ? "Resume" : "Pause");
    toggle.addEventListener("click", () => this.change({ enabled: watch.enabled === false }, toggle));
    const edit = h("button", { type: "button", class: "secondary small", disabled: !canEdit(),
      "aria-expanded": this.editing ? "true" : "false" }, "Edit");
    // An open edit form survives the redraws a reload of the chat makes (the one after Resume,
    // an SSE event): what the person is typing is kept, the form stays open.
    const form = this.editing && this.form ? this.form : this.editForm();
    this.form = form;
    form.hidden = !this.editing;
    edit.addEventListener("click", () => {
      this.editing = !this.editing;
      form.hidden = !this.editing;
      edit.setAttribute("aria-expanded", this.editing ? "true" : "false");
    });
    const last = watch.last_run_status;
    replace(this.el,
      h("div", { class: "watch-summary" },
        h("h2", { id: "watch-heading" }, h("span", { class: "badge watch" }, "Watched"), ` ${watch.schedule}`),
        h("p", { class: "meta" },
          watch.next_run_at ? ["Next check ", timeEl(watch.next_run_at), ` (${fromNow(watch.next_run_at)})`] : "No check planned",
          last ? [" · last check: ", statusBadge(last)] : null,
          watch.credits_per_month ? ` · up to ${watch.credits_per_month} credits a month` : null),
        watch.message ? h("p", { class: "meta question" }, "Question: ", h("q", {}, watch.message)) : null,
        watch.condition_words ? h("p", { class: "meta condition" }, "Tells you when ", watch.condition_words,
          watch.last_value !== null && watch.last_value !== undefined
            ? ` · last read ${valueText(watch.last_value, watch.condition)}${watch.last_condition_met ? " (met)" : ""}` : "") : null,
        watch.enabled === false ? h("p", { class: "meta" }, h("span", { class: "badge" }, "Paused")) : null),
      h("div", { class: "watch-actions" }, runNow, toggle, edit, stop),
      form,
      watchNotifications(watch, (updated) => { this.chat = { ...this.chat, watch: updated }; this.draw(); this.onChanged(); }),
      this.message,
      this.details);
  }

  editForm() {
    const watch = this.watch;
    const condition = watch.condition || {};
    const form = h("form", { class: "watch-edit", hidden: true, "aria-label": "Edit the watch" },
      h("label", {}, "Cadence (cron) ", h("input", { name: "cadence", value: watch.cadence, maxlength: "100" })),
      h("label", {}, "Timezone ", h("input", { name: "timezone", value: watch.timezone, maxlength: "64" })),
      h("label", {}, "Tell me when ", h("select", { name: "kind" },
        ["", "below", "above", "mentions", "absent", "new_items", "in_stock", "changes_by"].map((kind) =>
          h("option", { value: kind, selected: (condition.kind || "") === kind }, kind || "anything changes")))),
      h("label", {}, "Value ", h("input", { name: "value", type: "number", step: "any", value: condition.value ?? "" })),
      h("label", {}, "Text ", h("input", { name: "text", maxlength: "200", value: condition.text ?? "" })),
      h("label", {}, "Unit ", h("input", { name: "unit", maxlength: "8", value: condition.unit ?? "" })),
      h("button", { type: "submit", class: "primary small" }, "Save"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const f = form.elements;
      const kind = f.kind.value;
      const body = { cadence: f.cadence.value.trim(), timezone: f.timezone.value.trim(), condition: null };
      if (kind) {
        body.condition = { kind, value: f.value.value === "" ? null : Number(f.value.value),
          text: f.text.value.trim() || null, unit: f.unit.value.trim() || null };
      }
      this.change(body, form.querySelector("button[type=submit]"));
    });
    return form;
  }

  async change(body, button) {
    button.disabled = true;
    try {
      const updated = await patch(`/api/automations/${this.watch.id}`, body);
      this.chat = { ...this.chat, watch: updated };
      if (button.form === this.form) this.editing = false;  // saved: a fresh form next time
      this.draw();
      announce("Watch updated.");
      this.onChanged();
    } catch (error) {
      this.say(error instanceof ApiError ? error.message : "Could not change the watch.");
      button.disabled = false;
    }
  }

  async loadRuns() {
    try {
      const data = await get(`/api/automations/${this.watch.id}/runs`);
      if (!data.runs.length) {
        replace(this.history, h("p", { class: "meta" }, "No runs yet."));
        return;
      }
      replace(this.history, h("table", {},
        h("caption", { class: "visually-hidden" }, "Runs of this watch, newest first"),
        h("thead", {}, h("tr", {}, ["When", "Kind", "Status", "Condition", "Finished"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, data.runs.map(runRow))));
    } catch (error) {
      replace(this.history, h("p", { class: "error-box", role: "alert" }, error.message));
    }
  }

  say(text) {
    this.message.textContent = text;
  }

  async runNow(button) {
    button.disabled = true;
    try {
      const queued = await post(`/api/automations/${this.watch.id}/run`);
      this.queued = queued.run_id;
      this.rechecks = 0;
      this.say("Check queued. The result will appear in this chat.");
      announce("Check queued.");
      this.follow(this.queued);
      if (this.details.open) this.loadRuns();
    } catch (error) {
      this.say(error instanceof ApiError ? error.message : "Could not queue the check.");
    } finally {
      window.setTimeout(() => { button.disabled = !canEdit(); }, 1500);
    }
  }

  async stop(button) {
    if (!window.confirm("Stop watching? This chat will be a normal chat again.")) return;
    button.disabled = true;
    try {
      await del(`/api/automations/${this.watch.id}`);
      announce("Stopped watching.");
      this.onChanged();
    } catch (error) {
      this.say(error.message);
      button.disabled = false;
    }
  }
}
