// The HTTP API: JSON in, the envelope's data out, errors as readable sentences.

const OFFLINE = "Lookout can't be reached. Check your connection; it will retry.";
let workspace = null;
const signedOutListeners = new Set();

/** An error a person can read: `message` is a sentence; `code` is the API's error code. */
export class ApiError extends Error {
  constructor(message, { status = 0, code = "network", details = {}, retryAfter = null } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }
}

/** Act in this workspace (sent as X-Lookout-Workspace); null = the user's first. */
export function useWorkspace(id) {
  workspace = id;
}

export function onSignedOut(listener) {
  signedOutListeners.add(listener);
}

export function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  if (workspace) out["X-Lookout-Workspace"] = workspace;
  return out;
}

/** The field problems of an invalid_input error, as one sentence. */
function fieldProblems(details) {
  const fields = details && details.fields;
  if (!fields || typeof fields !== "object") return "";
  const said = Object.entries(fields).map(([name, problems]) => {
    const text = Array.isArray(problems) ? problems.join(" ") : JSON.stringify(problems);
    return `${name.replaceAll("_", " ")}: ${text}`;
  });
  return said.length ? ` (${said.join("; ")})` : "";
}

/** The ApiError of a non-2xx response (an envelope, or whatever a proxy sent). */
export async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const error = body && body.error;
  const retryAfter = response.headers.get("Retry-After");
  if (!error) {
    return new ApiError(`Lookout answered ${response.status} ${response.statusText}. Try again.`,
      { status: response.status, code: "http_error", retryAfter });
  }
  let message = error.message || "Something went wrong.";
  if (error.code === "invalid_input") message += fieldProblems(error.details);
  const failure = new ApiError(message,
    { status: response.status, code: error.code, details: error.details, retryAfter });
  if (response.status === 401) signedOutListeners.forEach((listener) => listener(failure));
  return failure;
}

/** fetch() that turns a network failure into an ApiError. */
export async function send(method, path, { body, extraHeaders = {}, signal } = {}) {
  const init = { method, headers: headers(extraHeaders), credentials: "same-origin", signal };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  try {
    return await fetch(path, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(OFFLINE);
  }
}

/** Call the API; resolves to the envelope's `data` (null for 204). */
export async function api(method, path, body) {
  const response = await send(method, path, { body });
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return null;
  const envelope = await response.json();
  return envelope.data;
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}) => api("POST", path, body);
export const patch = (path, body) => api("PATCH", path, body);
export const del = (path) => api("DELETE", path);
