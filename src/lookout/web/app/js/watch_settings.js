// Settings → Watches: the workspace's default time zone (new watches run in the sender's
// browser's zone, else this one) and how long the history of checks is kept.

import { ApiError, get, patch } from "./api.js";
import { announce, h, replace, uid } from "./dom.js";
import { canEdit, state } from "./state.js";
import { browserZone } from "./zone.js";

function zones() {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

export function watchSettingsSection() {
  const id = "watch-settings-heading";
  const body = h("div", {}, h("p", { class: "meta" }, "Loading…"));
  const path = () => `/api/workspaces/${state.me.workspace.id}/watch-settings`;
  (async () => {
    try {
      draw(await get(path()));
    } catch (failure) {
      replace(body, h("p", { class: "error-box", role: "alert" }, failure.message));
    }
  })();

  function draw(prefs) {
    const zoneId = uid("zone");
    const daysId = uid("days");
    const listId = uid("zones");
    const zone = h("input", { id: zoneId, name: "timezone", value: prefs.timezone, list: listId, maxlength: "64", required: true, disabled: !canEdit() });
    const days = h("input", { id: daysId, name: "days", type: "number", min: "1", max: "3650", value: String(prefs.history_retention_days), required: true, disabled: !canEdit() });
    const mine = browserZone();
    const useMine = h("button", { type: "button", class: "secondary small", disabled: !canEdit() || !mine }, `Use ${mine || "my zone"}`);
    useMine.addEventListener("click", () => { zone.value = mine; });
    const said = h("p", { class: "meta", role: "status" });
    const form = h("form", { class: "stack-form" },
      h("div", { class: "field" }, h("label", { for: zoneId }, "Default time zone"), zone,
        h("datalist", { id: listId }, zones().map((name) => h("option", { value: name }))), useMine),
      h("p", { class: "meta" }, "New watches run in the time zone of the browser they are asked from, unless the message names one (“at 9am Tokyo time”); this zone is for the rest (API calls, agents)."),
      h("div", { class: "field" }, h("label", { for: daysId }, "Keep the history of checks for (days)"), days),
      h("p", { class: "meta" }, "Older checks and the pages they read are pruned; a watch's history says what was pruned."),
      h("button", { type: "submit", class: "primary small", disabled: !canEdit() }, "Save"),
      said);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const saved = await patch(path(), { timezone: zone.value.trim(), history_retention_days: Number(days.value) });
        said.textContent = `Saved: ${saved.timezone}, ${saved.history_retention_days} days.`;
        announce(said.textContent);
      } catch (failure) {
        said.textContent = failure instanceof ApiError ? failure.message : "Could not save.";
      }
    });
    replace(body, form);
  }

  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, "Watches"), body);
}
