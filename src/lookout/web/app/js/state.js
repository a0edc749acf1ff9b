// What every view shares: who is signed in, the workspace, its chats; change notifications.

import { get, useWorkspace } from "./api.js";

export const state = { me: null, chats: [] };
const listeners = new Map();

export function on(event, listener) {
  if (!listeners.has(event)) listeners.set(event, new Set());
  listeners.get(event).add(listener);
  return () => listeners.get(event).delete(listener);
}

export function emit(event, payload) {
  for (const listener of listeners.get(event) || []) listener(payload);
}

const WORKSPACE_KEY = "lookout.workspace";

/** Pick the workspace to act in (remembered on this browser). */
export function chooseWorkspace(id) {
  localStorage.setItem(WORKSPACE_KEY, id);
  useWorkspace(id);
}

export async function refreshMe() {
  useWorkspace(localStorage.getItem(WORKSPACE_KEY));
  let me;
  try {
    me = await get("/api/me");
  } catch (error) {
    if (error.code !== "not_found") throw error;
    localStorage.removeItem(WORKSPACE_KEY); // a workspace the user no longer belongs to
    useWorkspace(null);
    me = await get("/api/me");
  }
  state.me = me;
  emit("me", me);
  return me;
}

export async function refreshChats() {
  const data = await get("/api/chats?limit=200");
  state.chats = data.chats;
  emit("chats", state.chats);
  return state.chats;
}

export function canEdit() {
  const role = state.me && state.me.workspace.role;
  return role === "owner" || role === "editor";
}
