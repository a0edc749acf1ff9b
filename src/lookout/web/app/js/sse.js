// Server-sent events over fetch(): a POST can stream (EventSource cannot), headers can be set
// (the workspace), and reconnects resume with Last-Event-ID like EventSource does.

import { ApiError, errorOf, send } from "./api.js";

/**
 * The events of an SSE response body, in order: {id, event, data}.
 * Follows the EventSource parsing rules: CR, LF or CRLF line ends; comments (": ping")
 * ignored; multi-line data joined with "\n"; an event is dispatched at a blank line.
 */
export async function* readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = { id: null, event: "message", data: [] };
  let endedWithCR = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      // A chunk may end between the "\r" and "\n" of one line end: that "\n" is no new line.
      const text = endedWithCR && value.startsWith("\n") ? value.slice(1) : value;
      endedWithCR = text.endsWith("\r");
      buffer += text;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (event.data.length) yield { id: event.id, event: event.event, data: event.data.join("\n") };
          event = { id: null, event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "data") event.data.push(text);
        else if (field === "id" && !text.includes("\0")) event.id = text;
        else if (field === "event") event.event = text;
      }
    }
  } finally {
    reader.cancel().catch(() => {}); // a reader that stops early closes the connection
  }
}

/**
 * Open an SSE request. Resolves to the Response when it streams events, null for 204 (nothing
 * to stream); throws an ApiError for an error answer.
 */
export async function open(method, path, { body, lastEventId = null, signal } = {}) {
  const extraHeaders = { Accept: "text/event-stream" };
  if (lastEventId) extraHeaders["Last-Event-ID"] = lastEventId;
  const response = await send(method, path, { body, extraHeaders, signal });
  if (response.status === 204) return null;
  if (!response.ok) throw await errorOf(response);
  if (!(response.headers.get("Content-Type") || "").includes("text/event-stream")) {
    throw new ApiError("Lookout answered with something other than a stream.", { code: "http_error" });
  }
  return response;
}

/** The parsed UI-stream parts of a response: [id, part], up to `data: [DONE]`. */
export async function* parts(response) {
  for await (const event of readEvents(response)) {
    if (event.data === "[DONE]") return;
    let part;
    try {
      part = JSON.parse(event.data);
    } catch {
      continue; // not ours; a proxy's keep-alive or similar
    }
    yield [event.id, part];
  }
}

const BACKOFF_MS = [500, 1000, 2000, 5000, 10000];

/**
 * A GET stream that never gives up: when the connection drops it reconnects (backing off, and at
 * once when the browser comes back online) and resumes after the last event it delivered.
 * onPart(id, part) gets every part; onState("live" | "reconnecting" | "stopped", error?).
 */
export class LiveStream {
  constructor(path, { onPart, onState = () => {}, lastEventId = null }) {
    this.path = path;
    this.onPart = onPart;
    this.onState = onState;
    this.lastEventId = lastEventId;
    this.controller = null;
    this.stopped = false;
    this.failures = 0;
    this.wake = null;
    this.onOnline = () => this.wake && this.wake();
  }

  start() {
    window.addEventListener("online", this.onOnline);
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("online", this.onOnline);
    if (this.controller) this.controller.abort();
    if (this.wake) this.wake();
  }

  async loop() {
    while (!this.stopped) {
      this.controller = new AbortController();
      try {
        const response = await open("GET", this.path,
          { lastEventId: this.lastEventId, signal: this.controller.signal });
        if (response) {
          this.failures = 0;
          this.onState("live");
          for await (const [id, part] of parts(response)) {
            if (id && id !== "0-0") this.lastEventId = id;
            this.onPart(id, part);
          }
        }
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof ApiError && [401, 403, 404].includes(error.status)) {
          this.onState("stopped", error);
          return;
        }
      }
      if (this.stopped) break;
      this.onState("reconnecting");
      await this.pause(BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)]);
      this.failures += 1;
    }
    this.onState("stopped");
  }

  pause(ms) {
    return new Promise((resolve) => {
      const timer = window.setTimeout(done, ms);
      const self = this;
      function done() {
        window.clearTimeout(timer);
        self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }
}
