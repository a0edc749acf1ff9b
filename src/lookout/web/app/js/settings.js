// Settings: API keys, usage, MCP connectors, how to connect an agent over MCP, invites (owners)
// and the account (sign out everywhere).

import { agentsSection } from "./agents.js";
import { notificationsSection } from "./notifications.js";
import { portabilitySection } from "./portability.js";
import { ApiError, del, get, patch, post } from "./api.js";
import { announce, copyButton, h, plural, replace, timeEl, uid } from "./dom.js";
import { canEdit, state } from "./state.js";
import { watchSettingsSection } from "./watch_settings.js";

const PLACEHOLDER_KEY = "lk_your_api_key";
let lastKey = null; // the key created on this page, to fill in the agent configs (memory only)

function field(label, attrs, hint) {
  const id = uid("field");
  const hintId = hint ? `${id}-hint` : null;
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, "aria-describedby": hintId, ...attrs }),
    hint ? h("p", { id: hintId, class: "meta" }, hint) : null);
}

function errorText(error) {
  return error instanceof ApiError ? error.message : "Something went wrong; try again.";
}

function firstSentence(text) {
  const match = text.match(/^.*?[.!?](\s|$)/);
  return (match ? match[0] : text).trim();
}

function section(title, id, ...body) {
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), body);
}

function alertBox() {
  return h("p", { class: "error-box", role: "alert", hidden: true });
}

function showError(box, error) {
  box.textContent = errorText(error);
  box.hidden = false;
}

// ---- API keys -----------------------------------------------------------------------------

function keysSection(onKey) {
  const list = h("div", { class: "table-wrap" });
  const shown = h("div", { class: "new-key", hidden: true });
  const error = alertBox();
  const name = field("Name", { name: "name", required: true, maxlength: 100, placeholder: "e.g. my script" });
  const scopeId = uid("scope");
  const scope = h("select", { id: scopeId, name: "scope" },
    h("option", { value: "full" }, "Full: what you may do"),
    h("option", { value: "read-only" }, "Read-only: never spends credits"));
  const form = h("form", { class: "inline-form" }, name,
    h("div", { class: "field" }, h("label", { for: scopeId }, "Scope"), scope),
    h("button", { type: "submit", class: "primary", disabled: !canEdit() }, "Create key"));

  async function load() {
    try {
      const { keys } = await get(`/api/workspaces/${state.me.workspace.id}/keys`);
      if (!keys.length) {
        replace(list, h("p", { class: "meta" }, "No API keys yet."));
        return;
      }
      replace(list, h("table", { class: "keys-table" },
        h("caption", { class: "visually-hidden" }, "API keys of this workspace"),
        h("thead", {}, h("tr", {}, ["Name", "Key", "Scope", "Created", "Last used", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, keys.map(keyRow))));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function keyRow(key) {
    const revoked = Boolean(key.revoked_at);
    const revoke = h("button", { type: "button", class: "secondary small danger",
      disabled: !canEdit(), "aria-label": `Revoke ${key.name}` }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!window.confirm(`Revoke “${key.name}”? Programs using it stop working at once.`)) return;
      revoke.disabled = true;
      try {
        await del(`/api/workspaces/${state.me.workspace.id}/keys/${key.id}`);
        announce(`Key ${key.name} revoked.`);
        await load();
      } catch (failure) {
        showError(error, failure);
        revoke.disabled = false;
      }
    });
    return h("tr", { class: revoked ? "revoked" : null, dataset: { keyName: key.name } },
      h("td", {}, key.name),
      h("td", {}, h("code", {}, `${key.prefix}…`)),
      h("td", {}, key.scope),
      h("td", {}, timeEl(key.created_at)),
      h("td", {}, key.last_used_at ? timeEl(key.last_used_at) : "never"),
      h("td", {}, revoked ? h("span", { class: "badge status-failed" }, ["Revoked ", timeEl(key.revoked_at)]) : revoke));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const input = form.querySelector("input");
    if (!input.value.trim()) {
      showError(error, new ApiError("Give the key a name, so you know later what uses it."));
      input.focus();
      return;
    }
    try {
      const created = await post(`/api/workspaces/${state.me.workspace.id}/keys`, { name: input.value.trim(), scope: scope.value });
      lastKey = created.key;
      onKey(created.key);
      const keyId = uid("key");
      replace(shown,
        h("p", {}, h("strong", {}, "Copy your new key now. "), "It is shown this once only; Lookout keeps only a fingerprint of it."),
        h("div", { class: "copy-row" },
          h("label", { for: keyId, class: "visually-hidden" }, "New API key"),
          h("input", { id: keyId, class: "key-text", readonly: true, value: created.key }),
          copyButton(() => created.key)),
        h("button", { type: "button", class: "link-button", onclick: () => { shown.hidden = true; } }, "I saved it — hide it"));
      shown.hidden = false;
      input.value = "";
      shown.querySelector("input").focus();
      shown.querySelector("input").select();
      await load();
    } catch (failure) {
      showError(error, failure);
    }
  });

  load();
  return section("API keys", "keys-heading",
    h("p", { class: "meta" }, "Programs and agents use a key to call Lookout’s REST API and MCP server for this workspace, paying with its credits. A key acts with your rights in the workspace as they are now (it stops working if you leave it); a read-only key only reads."),
    error, form, shown, list);
}

// ---- invites (owners) -------------------------------------------------------------------------

function invitesSection() {
  const list = h("div", { class: "table-wrap" });
  const shown = h("div", { class: "new-key", hidden: true });
  const error = alertBox();
  const email = field("Email", { name: "email", type: "email", required: true, maxlength: 254 });
  const roleId = uid("role");
  const role = h("div", { class: "field" }, h("label", { for: roleId }, "Role"),
    h("select", { id: roleId, name: "role" }, h("option", { value: "editor" }, "Editor"),
      h("option", { value: "viewer" }, "Viewer")));
  const form = h("form", { class: "inline-form" }, email, role,
    h("button", { type: "submit", class: "primary" }, "Create invite link"));
  const base = () => `/api/workspaces/${state.me.workspace.id}/invites`;

  async function load() {
    try {
      const { invites } = await get(base());
      replace(list, invites.length ? h("table", { class: "keys-table" },
        h("caption", { class: "visually-hidden" }, "Open invites of this workspace"),
        h("thead", {}, h("tr", {}, ["Email", "Role", "Expires", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, invites.map(inviteRow))) : h("p", { class: "meta" }, "No open invites."));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function inviteRow(invite) {
    const revoke = h("button", { type: "button", class: "secondary small danger",
      "aria-label": `Revoke the invite of ${invite.email}` }, "Revoke");
    revoke.addEventListener("click", async () => {
      revoke.disabled = true;
      try {
        await del(`${base()}/${invite.id}`);
        announce(`Invite of ${invite.email} revoked.`);
        await load();
      } catch (failure) {
        showError(error, failure);
        revoke.disabled = false;
      }
    });
    return h("tr", { dataset: { inviteEmail: invite.email } },
      h("td", {}, invite.email), h("td", {}, invite.role), h("td", {}, timeEl(invite.expires_at)),
      h("td", {}, revoke));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const values = Object.fromEntries(new FormData(form));
    try {
      const made = await post(base(), { email: values.email.trim(), role: values.role });
      const linkId = uid("invite-link");
      replace(shown,
        h("p", {}, h("strong", {}, `Send this link to ${made.invite.email}. `), "It is shown this once, works once, and expires ", timeEl(made.invite.expires_at), "."),
        h("div", { class: "copy-row" },
          h("label", { for: linkId, class: "visually-hidden" }, "Invite link"),
          h("input", { id: linkId, class: "key-text invite-link", readonly: true, value: made.url }),
          copyButton(() => made.url)));
      shown.hidden = false;
      form.reset();
      await load();
    } catch (failure) {
      showError(error, failure);
    }
  });

  load();
  return section("Invites", "invites-heading",
    h("p", { class: "meta" }, "Invite someone to this workspace: the link lets that email create an account and join with the role you choose."),
    error, form, shown, list);
}

// ---- account ------------------------------------------------------------------------------

function accountSection() {
  const error = alertBox();
  const everywhere = h("button", { type: "button", class: "secondary danger" }, "Sign out everywhere");
  everywhere.addEventListener("click", async () => {
    if (!window.confirm("Sign out on every browser and device, this one included?")) return;
    everywhere.disabled = true;
    try {
      await post("/api/auth/logout-everywhere");
      window.location.hash = "#/";
      window.location.reload();
    } catch (failure) {
      showError(error, failure);
      everywhere.disabled = false;
    }
  });
  return section("Account", "account-heading",
    h("p", { class: "meta" }, "Ends every session of your account: any browser where you are signed in, including one you no longer have."),
    error, everywhere);
}

// ---- usage --------------------------------------------------------------------------------

function usageSection() {
  const body = h("div", {}, h("p", { class: "meta" }, "Loading…"));
  (async () => {
    try {
      const usage = await get("/v1/usage");
      const verbs = usage.verbs.length
        ? h("table", {},
          h("caption", {}, `Charges per verb, last ${usage.period_days} days`),
          h("thead", {}, h("tr", {}, ["Verb", "Calls", "Credits"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, usage.verbs.map((u) => h("tr", {},
            h("td", {}, h("code", {}, u.verb)), h("td", { class: "num" }, u.calls.toLocaleString()),
            h("td", { class: "num" }, u.credits.toLocaleString())))))
        : h("p", { class: "meta" }, "Nothing charged in the last 30 days.");
      const ledger = usage.ledger.length
        ? h("details", {}, h("summary", {}, "Recent charges and refunds"),
          h("table", {},
            h("thead", {}, h("tr", {}, ["When", "What", "Verb", "Credits"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, usage.ledger.map((e) => h("tr", {},
              h("td", {}, timeEl(e.created_at)), h("td", {}, e.kind), h("td", {}, e.verb || "—"),
              h("td", { class: "num" }, e.amount.toLocaleString()))))))
        : null;
      replace(body,
        h("p", { class: "big-number" }, h("strong", {}, (usage.balance || 0).toLocaleString()), " credits left"),
        verbs, ledger);
    } catch (failure) {
      replace(body, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  })();
  return section("Usage", "usage-heading", body);
}

// ---- MCP connectors ----------------------------------------------------------------------

/** "Use in chats": the chat agent may call the connector's tools (read-only ones only in
 * scheduled checks). Off for a new connector unless ticked. */
function chatUseBox(attrs) {
  const id = uid("chatuse");
  const input = h("input", { id, type: "checkbox", ...attrs });
  if (attrs.checked) input.checked = true;
  return h("div", { class: "field checkbox" }, input,
    h("label", { for: id }, "Use in chats (scheduled checks use only its read-only tools)"));
}

function connectorsSection() {
  const list = h("div", {});
  const error = alertBox();
  const headerRows = h("div", { class: "header-rows" });
  const addHeaderRow = () => {
    const nameId = uid("hname");
    const valueId = uid("hvalue");
    headerRows.append(h("div", { class: "header-row" },
      h("div", { class: "field" }, h("label", { for: nameId }, "Header name"),
        h("input", { id: nameId, class: "header-name", placeholder: "Authorization" })),
      h("div", { class: "field" }, h("label", { for: valueId }, "Header value"),
        h("input", { id: valueId, class: "header-value", type: "password", autocomplete: "off", placeholder: "Bearer …" }))));
  };
  addHeaderRow();
  const form = h("form", { class: "stack-form" },
    field("Name", { name: "name", required: true, maxlength: 100, placeholder: "e.g. tickets" }),
    field("URL", { name: "url", type: "url", required: true, placeholder: "https://example.com/mcp" },
      "The server’s Streamable HTTP endpoint."),
    headerRows,
    chatUseBox({ name: "chat_use" }),
    h("div", { class: "form-actions" },
      h("button", { type: "button", class: "secondary small", onclick: addHeaderRow }, "Add another header"),
      h("button", { type: "submit", class: "primary", disabled: !canEdit() }, "Add connector")));

  async function load() {
    try {
      const { connectors } = await get(`/api/workspaces/${state.me.workspace.id}/mcp-connectors`);
      replace(list, connectors.length ? h("ul", { class: "connector-list" }, connectors.map(row))
        : h("p", { class: "meta" }, "No connectors yet."));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function row(connector) {
    const result = h("div", { class: "test-result", role: "status" });
    const test = h("button", { type: "button", class: "secondary small", disabled: !canEdit() }, "Test");
    const remove = h("button", { type: "button", class: "secondary small danger", disabled: !canEdit() }, "Remove");
    test.addEventListener("click", async () => {
      test.disabled = true;
      replace(result, h("p", { class: "meta" }, "Asking the server for its tools…"));
      try {
        const tested = await post(`/api/workspaces/${state.me.workspace.id}/mcp-connectors/${connector.id}/test`);
        replace(result, h("p", { class: "ok" }, `Works: ${plural(tested.tools.length, "tool")}.`),
          h("ul", { class: "tool-names" }, tested.tools.map((t) => h("li", { title: t.description || "" }, h("code", {}, t.name),
            t.description ? ` — ${firstSentence(t.description)}` : ""))));
      } catch (failure) {
        replace(result, h("p", { class: "error-box" }, errorText(failure)));
      } finally {
        test.disabled = false;
      }
    });
    remove.addEventListener("click", async () => {
      if (!window.confirm(`Remove the connector “${connector.name}”?`)) return;
      try {
        await del(`/api/workspaces/${state.me.workspace.id}/mcp-connectors/${connector.id}`);
        announce(`Connector ${connector.name} removed.`);
        await load();
      } catch (failure) {
        showError(error, failure);
      }
    });
    const chatUse = chatUseBox({ checked: connector.chat_use, disabled: !canEdit() });
    const box = chatUse.querySelector("input");
    box.addEventListener("change", async () => {
      box.disabled = true;
      try {
        await patch(`/api/workspaces/${state.me.workspace.id}/mcp-connectors/${connector.id}`,
          { chat_use: box.checked });
        announce(`${connector.name}: ${box.checked ? "used" : "not used"} in chats.`);
      } catch (failure) {
        box.checked = !box.checked;
        showError(error, failure);
      } finally {
        box.disabled = !canEdit();
      }
    });
    const headerNames = Object.keys(connector.headers || {});
    return h("li", { class: "connector" },
      h("div", {}, h("strong", {}, connector.name), " ", h("code", { class: "url" }, connector.url),
        h("p", { class: "meta" }, headerNames.length ? `Sends ${headerNames.join(", ")}` : "No headers",
          connector.headers_readable === false ? " · unreadable: the secret key changed, add it again" : "")),
      chatUse, h("div", { class: "row-actions" }, test, remove), result);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const data = new FormData(form);
    const headers = {};
    for (const rowEl of headerRows.children) {
      const name = rowEl.querySelector(".header-name").value.trim();
      if (name) headers[name] = rowEl.querySelector(".header-value").value;
    }
    try {
      await post(`/api/workspaces/${state.me.workspace.id}/mcp-connectors`,
        { name: String(data.get("name")).trim(), url: String(data.get("url")).trim(), headers,
          chat_use: data.get("chat_use") === "on" });
      form.reset();
      announce("Connector added.");
      await load();
    } catch (failure) {
      showError(error, failure);
    }
  });

  load();
  return section("MCP connectors", "connectors-heading",
    h("p", { class: "meta" }, "Your own MCP servers: Lookout’s agent can use their tools in chats (with a language model configured)."),
    list, h("h3", {}, "Add a connector"), error, form);
}

// ---- connect an agent --------------------------------------------------------------------

export function agentConfigs(url, key) {
  const auth = `Bearer ${key}`;
  return [
    ["Claude Code", `claude mcp add --transport http lookout ${url} --header "Authorization: ${auth}"`],
    ["Cursor (~/.cursor/mcp.json)", JSON.stringify({ mcpServers: { lookout: { url, headers: { Authorization: auth } } } }, null, 2)],
    ["VS Code (.vscode/mcp.json)", JSON.stringify({ servers: { lookout: { type: "http", url, headers: { Authorization: auth } } } }, null, 2)],
    ["Windsurf (mcp_config.json)", JSON.stringify({ mcpServers: { lookout: { serverUrl: url, headers: { Authorization: auth } } } }, null, 2)],
    ["Claude Desktop (through mcp-remote)", JSON.stringify({ mcpServers: { lookout: {
      command: "npx", args: ["-y", "mcp-remote", url, "--header", "Authorization:${LOOKOUT_AUTH}"],
      env: { LOOKOUT_AUTH: auth } } } }, null, 2)],
  ];
}

function agentSection() {
  const url = `${window.location.origin}/mcp`;
  const body = h("div", {});
  const draw = () => {
    const key = lastKey || PLACEHOLDER_KEY;
    const urlId = uid("mcp-url");
    replace(body,
      h("div", { class: "copy-row" },
        h("label", { for: urlId }, "MCP server URL"),
        h("input", { id: urlId, readonly: true, value: url, class: "key-text" }),
        copyButton(() => url)),
      h("p", { class: "meta" }, lastKey
        ? "The configurations below include the key you just created."
        : ["Create an API key above and send it as ", h("code", {}, "Authorization: Bearer lk_…"), ". Replace ",
          h("code", {}, PLACEHOLDER_KEY), " below with it."]),
      agentConfigs(url, key).map(([name, text], index) => h("details", { class: "config", open: index === 0 },
        h("summary", {}, name),
        h("div", { class: "config-head" }, copyButton(() => text, `Copy ${name.split(" (")[0]} config`)),
        h("pre", {}, h("code", {}, text)))));
  };
  draw();
  return [section("Connect an agent", "agent-heading",
    h("p", { class: "meta" }, "Claude, Cursor, VS Code and other MCP clients can use Lookout’s verbs (read pages, find pages, places and reviews) over the remote MCP server, paid from this workspace’s credits."),
    h("p", { class: "meta" }, "Claude.ai, Claude Desktop and ChatGPT: add a custom connector with this URL and no key; they open a Lookout page where you sign in, pick the workspace and allow it."),
    body), draw];
}

/** The settings view in `root`. */
export function renderSettings(root) {
  document.title = "Settings · Lookout";
  const [agent, redrawAgent] = agentSection();
  const owner = state.me.workspace.role === "owner" && state.me.user;
  const sections = [keysSection(redrawAgent), usageSection(), watchSettingsSection(), notificationsSection(), portabilitySection(),
    agentsSection(), connectorsSection(), agent,
    owner ? invitesSection() : null, state.me.user ? accountSection() : null].filter(Boolean);
  const jump = (target) => () => {
    target.scrollIntoView({ block: "start" });
    target.querySelector("h2").setAttribute("tabindex", "-1");
    target.querySelector("h2").focus();
  };
  replace(root, h("div", { class: "settings" },
    h("h1", {}, "Settings"),
    h("p", { class: "meta" }, `Workspace ${state.me.workspace.name} · your role: ${state.me.workspace.role}`),
    h("nav", { class: "settings-nav", "aria-label": "Settings sections" },
      sections.map((el) => h("button", { type: "button", class: "secondary small", onclick: jump(el) },
        el.querySelector("h2").textContent))),
    sections));
}
