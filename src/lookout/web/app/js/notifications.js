// Settings → Notifications: where watches send what changed. Add a target (an Apprise URL, or
// a signed webhook whose secret is shown once), test it, make it the default, remove it.

import { ApiError, del, get, patch, post } from "./api.js";
import { announce, copyButton, h, replace, timeEl, uid } from "./dom.js";
import { canEdit, state } from "./state.js";

// The common Apprise schemes, as a person would write them (https://github.com/caronc/apprise).
const SCHEMES = [
  ["Email", "mailtos://user:app-password@smtp.example.com?to=me@example.com", "SMTP over TLS; the password is an app password."],
  ["Slack", "slack://TokenA/TokenB/TokenC/#alerts", "The three parts of an incoming-webhook URL, then the channel."],
  ["Discord", "discord://webhook_id/webhook_token", "From the channel’s Integrations → Webhooks → Copy URL."],
  ["Telegram", "tgram://bot_token/chat_id", "A bot from @BotFather, and the chat it writes to."],
  ["ntfy", "ntfys://ntfy.example.com/lookout", "Your ntfy server and topic (ntfy://topic for ntfy.sh)."],
  ["Matrix", "matrixs://user:password@matrix.example.org/#room:example.org", "A bot account and the room it posts in."],
  ["Webhook", "https://hooks.example.com/lookout", "Lookout POSTs JSON signed with HMAC-SHA256 (X-Lookout-Signature); the secret is shown once."],
];

const base = () => `/api/workspaces/${state.me.workspace.id}/notification-targets`;
const errorText = (error) => (error instanceof ApiError ? error.message : "Something went wrong; try again.");

function schemesHelp() {
  return h("details", { class: "schemes" }, h("summary", {}, "Which URL? Email, Slack, Discord, Telegram, ntfy, Matrix, webhooks"),
    h("table", { class: "keys-table" },
      h("caption", { class: "visually-hidden" }, "Notification URL formats"),
      h("thead", {}, h("tr", {}, ["Service", "URL", "Where to find it"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, SCHEMES.map(([name, example, where]) =>
        h("tr", {}, h("td", {}, name), h("td", {}, h("code", {}, example)), h("td", {}, where))))));
}

function field(label, attrs, hint) {
  const id = uid("field");
  return h("div", { class: "field" }, h("label", { for: id }, label), h("input", { id, ...attrs }),
    hint ? h("p", { class: "meta" }, hint) : null);
}

/** The Notifications card of the settings view. */
export function notificationsSection() {
  const list = h("div", { class: "table-wrap" });
  const shown = h("div", { class: "new-key", hidden: true });
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const name = field("Name", { name: "name", required: true, maxlength: 100, placeholder: "e.g. team Slack" });
  const url = field("URL", { name: "url", required: true, maxlength: 2048, autocomplete: "off", placeholder: "ntfys://ntfy.example.com/lookout" },
    "Stored sealed; only its scheme and host are shown again.");
  const defaultId = uid("default");
  const form = h("form", { class: "stack-form", "aria-label": "Add a notification target" }, name, url,
    h("div", { class: "field checkbox" }, h("input", { id: defaultId, type: "checkbox", name: "default" }),
      h("label", { for: defaultId }, "Make it the default (watches that chose no target notify it)")),
    h("div", { class: "form-actions" }, h("button", { type: "submit", class: "primary", disabled: !canEdit() }, "Add target")));

  async function load() {
    try {
      const { targets } = await get(base());
      replace(list, targets.length ? h("table", { class: "keys-table targets-table" },
        h("caption", { class: "visually-hidden" }, "Notification targets of this workspace"),
        h("thead", {}, h("tr", {}, ["Name", "Sends to", "Added", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, targets.map(row)))
        : h("p", { class: "meta" }, "No notification targets yet: watches can’t notify anyone outside the chat until you add one."));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function row(target) {
    const result = h("p", { class: "meta test-result", role: "status" });
    const button = (text, extra = "") => h("button", { type: "button", class: `secondary small ${extra}`, disabled: !canEdit() }, text);
    const test = button("Test");
    const makeDefault = target.default ? null : button("Make default");
    const remove = button("Delete", "danger");
    test.addEventListener("click", async () => {
      test.disabled = true;
      result.textContent = "Sending a test message…";
      try {
        const tested = await post(`${base()}/${target.id}/test`);
        result.textContent = tested.sent ? "Test message sent." : `Not sent: ${tested.error}`;
        result.className = tested.sent ? "ok test-result" : "error-box test-result";
      } catch (failure) {
        result.textContent = errorText(failure);
      } finally {
        test.disabled = false;
      }
    });
    makeDefault?.addEventListener("click", () => act(() => patch(`${base()}/${target.id}`, { default: true }), `${target.name} is now the default.`));
    remove.addEventListener("click", () => {
      if (window.confirm(`Delete the target “${target.name}”? Watches stop notifying it.`)) {
        act(() => del(`${base()}/${target.id}`), `Target ${target.name} deleted.`);
      }
    });
    return h("tr", { dataset: { targetName: target.name } },
      h("td", {}, target.name, target.default ? [" ", h("span", { class: "badge watch" }, "Default")] : null),
      h("td", {}, h("code", {}, target.url), target.signed ? " · signed" : null),
      h("td", {}, timeEl(target.created_at)),
      h("td", { class: "row-actions" }, test, makeDefault, remove, result));
  }

  async function act(call, said) {
    error.hidden = true;
    try {
      await call();
      announce(said);
      await load();
    } catch (failure) {
      error.textContent = errorText(failure);
      error.hidden = false;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const f = form.elements;
    try {
      const created = await post(base(), { name: f.name.value.trim(), url: f.url.value.trim(), default: f.default.checked });
      form.reset();
      if (created.signing_secret) {
        const secretId = uid("secret");
        replace(shown,
          h("p", {}, h("strong", {}, "Copy the signing secret now. "), "It is shown this once; your receiver checks X-Lookout-Signature with it."),
          h("div", { class: "copy-row" }, h("label", { for: secretId, class: "visually-hidden" }, "Signing secret"),
            h("input", { id: secretId, class: "key-text signing-secret", readonly: true, value: created.signing_secret }),
            copyButton(() => created.signing_secret)),
          h("button", { type: "button", class: "link-button", onclick: () => { shown.hidden = true; } }, "I saved it — hide it"));
        shown.hidden = false;
      }
      announce(`Target ${created.target.name} added.`);
      await load();
    } catch (failure) {
      error.textContent = errorText(failure);
      error.hidden = false;
    }
  });

  load();
  return h("section", { class: "card", "aria-labelledby": "notifications-heading", id: "notifications" },
    h("h2", { id: "notifications-heading" }, "Notifications"),
    h("p", { class: "meta" }, "When a watch finds a change it posts in its chat, and also notifies these targets: the default one, or the ones a watch chose (its panel: Notifications)."),
    list, error, shown, schemesHelp(), form);
}

/** A watch's notification settings: on or muted, the default target or chosen ones. */
export function watchNotifications(watch, onSaved) {
  const notify = watch.notify || {};
  const box = h("details", { class: "watch-notify" }, h("summary", {}, notify.enabled ? "Notifications: on" : "Notifications: muted"));
  const body = h("div", {}, h("p", { class: "meta" }, "Loading targets…"));
  box.append(body);
  box.addEventListener("toggle", async () => {
    if (!box.open) return;
    try {
      const { targets } = await get(base());
      replace(body, form(targets));
    } catch (failure) {
      replace(body, h("p", { class: "error-box" }, errorText(failure)));
    }
  });

  function feedButton() {
    const out = h("div", { class: "copy-row", hidden: true });
    const make = h("button", { type: "button", class: "secondary small", disabled: !canEdit() }, "Atom feed of this watch");
    make.addEventListener("click", async () => {
      try {
        const made = await post(`/api/workspaces/${state.me.workspace.id}/feeds`, { watch_id: watch.id });
        const id = uid("watch-feed");
        replace(out, h("label", { for: id }, "Feed URL (shown once; asking again replaces it)"),
          h("input", { id, class: "key-text watch-feed-url", readonly: true, value: made.url }), copyButton(() => made.url));
        out.hidden = false;
      } catch (failure) {
        replace(out, h("p", { class: "error-box" }, errorText(failure)));
        out.hidden = false;
      }
    });
    return [make, out];
  }

  function form(targets) {
    const onId = uid("notify-on");
    const chosen = new Set(notify.targets || []);
    const checks = targets.map((t) => {
      const id = uid("target");
      return h("div", { class: "field checkbox" },
        h("input", { id, type: "checkbox", value: t.id, checked: chosen.has(t.id), class: "target-choice" }),
        h("label", { for: id }, t.name, t.default ? " (default)" : ""));
    });
    const said = h("p", { class: "meta", role: "status" });
    const save = h("button", { type: "submit", class: "primary small", disabled: !canEdit() }, "Save notifications");
    const el = h("form", { class: "stack-form", "aria-label": "Notifications of this watch" },
      h("div", { class: "field checkbox" }, h("input", { id: onId, type: "checkbox", name: "enabled", checked: Boolean(notify.enabled) }),
        h("label", { for: onId }, "Notify when this watch finds a change (unchecked: muted)")),
      targets.length ? [h("p", { class: "meta" }, "Send to (none ticked: the workspace’s default target):"), checks]
        : h("p", { class: "meta" }, "No targets yet: add one in Settings → Notifications."),
      save, said, feedButton());
    el.addEventListener("submit", async (event) => {
      event.preventDefault();
      const picked = [...el.querySelectorAll(".target-choice:checked")].map((c) => c.value);
      save.disabled = true;
      try {
        const updated = await patch(`/api/automations/${watch.id}`,
          { notify: { enabled: el.elements.enabled.checked, targets: picked.length ? picked : null } });
        announce("Notifications saved.");
        onSaved(updated);
      } catch (failure) {
        said.textContent = errorText(failure);
        save.disabled = false;
      }
    });
    return el;
  }
  return box;
}
