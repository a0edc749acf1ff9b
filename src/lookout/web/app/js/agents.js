// Settings → Connected agents: the MCP clients (Claude.ai, ChatGPT…) people connected to this
// workspace by signing in (OAuth), with what they may do, when they were last used, and Revoke.

import { ApiError, del, get } from "./api.js";
import { announce, h, replace, timeEl } from "./dom.js";
import { canEdit, state } from "./state.js";

function errorText(error) {
  return error instanceof ApiError ? error.message : "Something went wrong; try again.";
}

/** The section, loading itself. */
export function agentsSection() {
  const list = h("div", { class: "table-wrap" });
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const base = () => `/api/workspaces/${state.me.workspace.id}/oauth-agents`;

  async function load() {
    try {
      const { agents } = await get(base());
      if (!agents.length) {
        replace(list, h("p", { class: "meta" }, "No agent is connected. Paste this server’s MCP URL into Claude.ai, ChatGPT or Claude Desktop (custom connector) and sign in."));
        return;
      }
      replace(list, h("table", { class: "keys-table agents-table" },
        h("caption", { class: "visually-hidden" }, "Agents connected to this workspace"),
        h("thead", {}, h("tr", {}, ["Agent", "May", "Connected by", "Connected", "Last used", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, agents.map(row))));
    } catch (failure) {
      replace(list, h("p", { class: "error-box", role: "alert" }, errorText(failure)));
    }
  }

  function row(agent) {
    const name = agent.client_name || agent.client_id;
    const revoke = h("button", { type: "button", class: "secondary small danger",
      disabled: !canEdit(), "aria-label": `Revoke ${name}` }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!window.confirm(`Disconnect “${name}”? It stops working at once; it can be connected again.`)) return;
      revoke.disabled = true;
      error.hidden = true;
      try {
        await del(`${base()}/${agent.id}`);
        announce(`${name} disconnected.`);
        await load();
      } catch (failure) {
        error.textContent = errorText(failure);
        error.hidden = false;
        revoke.disabled = false;
      }
    });
    return h("tr", { class: agent.revoked_at ? "revoked" : null, dataset: { agentName: name } },
      h("td", {}, name, agent.client_uri ? h("p", { class: "meta" }, h("code", {}, agent.client_uri)) : null),
      h("td", {}, agent.scopes.map((scope) => h("code", { class: "scope" }, scope)).flatMap((el, i) => (i ? [" ", el] : [el]))),
      h("td", {}, agent.granted_by),
      h("td", {}, timeEl(agent.created_at)),
      h("td", {}, agent.last_used_at ? timeEl(agent.last_used_at) : "never"),
      h("td", {}, agent.revoked_at ? h("span", { class: "badge status-failed" }, ["Revoked ", timeEl(agent.revoked_at)]) : revoke));
  }

  load();
  return h("section", { class: "card", "aria-labelledby": "agents-heading" },
    h("h2", { id: "agents-heading" }, "Connected agents"),
    h("p", { class: "meta" }, "Agents people connected by signing in (OAuth). They act in this workspace and spend its credits, for as long as the person who connected them is a member."),
    error, list);
}
