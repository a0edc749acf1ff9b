// Settings → Feeds, export and import: the workspace's Atom feed (a secret URL, shown once,
// rotated or revoked here), its watches as a file, and an import of that file or of a
// changedetection.io backup's url-watches.json.

import { ApiError, del, get, post } from "./api.js";
import { announce, copyButton, h, plural, replace, timeEl, uid } from "./dom.js";
import { canEdit, state } from "./state.js";

const MAX_FILE = 900 * 1024; // under the server's 1 MiB body limit, with the wrapper
const ws = () => `/api/workspaces/${state.me.workspace.id}`;
const errorText = (error) => (error instanceof ApiError ? error.message : "Something went wrong; try again.");

function feedsPart() {
  const list = h("div", {});
  const shown = h("div", { class: "new-key", hidden: true });
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const make = h("button", { type: "button", class: "primary small", disabled: !canEdit() }, "Make the workspace feed URL");

  async function load() {
    try {
      const { feeds } = await get(`${ws()}/feeds`);
      const workspaceFeed = feeds.find((f) => !f.watch_id);
      make.textContent = workspaceFeed ? "Replace the workspace feed URL" : "Make the workspace feed URL";
      replace(list, feeds.length ? h("ul", { class: "connector-list feed-list" }, feeds.map(row))
        : h("p", { class: "meta" }, "No feed yet."));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function row(feed) {
    const revoke = h("button", { type: "button", class: "secondary small danger", disabled: !canEdit() }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!window.confirm("Revoke this feed? Readers using its URL stop getting changes.")) return;
      try {
        await del(`${ws()}/feeds/${feed.id}`);
        announce("Feed revoked.");
        shown.hidden = true;
        await load();
      } catch (failure) {
        error.textContent = errorText(failure);
        error.hidden = false;
      }
    });
    return h("li", {}, h("strong", {}, feed.watch_id ? "One watch" : "All watches"), " · ",
      h("code", {}, `${feed.prefix}…`), " · made ", timeEl(feed.rotated_at),
      " · last read ", feed.last_used_at ? timeEl(feed.last_used_at) : "never", " ", revoke);
  }

  make.addEventListener("click", async () => {
    error.hidden = true;
    try {
      const made = await post(`${ws()}/feeds`, {});
      const urlId = uid("feed");
      replace(shown,
        h("p", {}, h("strong", {}, "Copy the feed URL now. "), "It is shown this once; anyone with it can read what your watches found. Replacing it stops the old one."),
        h("div", { class: "copy-row" }, h("label", { for: urlId, class: "visually-hidden" }, "Feed URL"),
          h("input", { id: urlId, class: "key-text feed-url", readonly: true, value: made.url }), copyButton(() => made.url)));
      shown.hidden = false;
      announce("Feed URL made.");
      await load();
    } catch (failure) {
      error.textContent = errorText(failure);
      error.hidden = false;
    }
  });
  load();
  return [h("h3", {}, "Atom feed"),
    h("p", { class: "meta" }, "Follow every change your watches find in a feed reader, like changedetection.io’s RSS."),
    make, shown, error, list];
}

function download(name, data) {
  const link = h("a", { href: URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" })), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function transferPart() {
  const said = h("div", { class: "import-result", role: "status" });
  const exportButton = h("button", { type: "button", class: "secondary small" }, "Export watches (JSON)");
  exportButton.addEventListener("click", async () => {
    try {
      const file = await get(`${ws()}/watches/export`);
      download("lookout-watches.json", file);
      replace(said, h("p", { class: "ok" }, `Exported ${plural(file.watches.length, "watch", "watches")}.`));
    } catch (failure) {
      replace(said, h("p", { class: "error-box" }, errorText(failure)));
    }
  });
  const fileId = uid("import");
  const input = h("input", { id: fileId, type: "file", accept: ".json,application/json", class: "import-file", disabled: !canEdit() });
  input.addEventListener("change", async () => {
    const chosen = input.files[0];
    if (!chosen) return;
    if (chosen.size > MAX_FILE) {
      replace(said, h("p", { class: "error-box" }, `This file is ${Math.round(chosen.size / 1024)} KiB; import at most ${MAX_FILE / 1024} KiB at once.`));
      return;
    }
    let file;
    try {
      file = JSON.parse(await chosen.text());
    } catch {
      replace(said, h("p", { class: "error-box" }, "This file is not JSON."));
      return;
    }
    const source = file && typeof file === "object" && "watching" in file ? "changedetection.io" : "lookout";
    replace(said, h("p", { class: "meta" }, `Importing from ${source}…`));
    try {
      const done = await post(`${ws()}/watches/import`, { source, file });
      replace(said, h("p", { class: "ok" }, `Imported ${plural(done.created.length, "watch", "watches")}, each in its own chat.`),
        h("ul", { class: "imported" }, done.created.map((w) => h("li", {}, h("a", { href: `#/chat/${w.chat_id}` }, w.title), ` · ${w.cadence}`,
          w.tags.length ? ` · ${w.tags.join(", ")}` : ""))),
        done.ignored_keys.length ? h("p", { class: "meta" }, `Not carried over (no Lookout equivalent): ${done.ignored_keys.slice(0, 12).join(", ")}${done.ignored_keys.length > 12 ? "…" : ""}.`) : null);
      announce(`Imported ${done.created.length} watches.`);
    } catch (failure) {
      replace(said, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    } finally {
      input.value = "";
    }
  });
  return [h("h3", {}, "Export and import"),
    h("p", { class: "meta" }, "Move your watches between workspaces, or over from changedetection.io: upload the url-watches.json of its backup (URL, title, check interval, tags and paused are carried over)."),
    h("div", { class: "form-actions" }, exportButton),
    h("div", { class: "field" }, h("label", { for: fileId }, "Import a file (Lookout export or changedetection.io url-watches.json)"), input),
    said];
}

/** The "Feeds, export and import" card of the settings view. */
export function portabilitySection() {
  return h("section", { class: "card", "aria-labelledby": "portability-heading", id: "portability" },
    h("h2", { id: "portability-heading" }, "Feeds, export and import"), feedsPart(), transferPart());
}
