// Messages of a chat: stored ones (REST) and live ones, assembled from UI message stream parts
// (AI SDK UI message stream v1) the way `readUIMessageStream` does.

/** A new assistant message, from a `start` part. */
export function fromStart(part) {
  const meta = part.messageMetadata || {};
  return {
    id: part.messageId,
    role: "assistant",
    source: meta.source || "user",
    manual: meta.manual === true,
    parts: [],
    created_at: new Date().toISOString(),
    live: true,
    finished: false,
  };
}

/** Apply one stream part to a live message (mutates it). */
export function apply(message, part) {
  const type = part.type;
  if (type === "text-start") {
    message.parts.push({ type: "text", id: part.id, text: "", state: "streaming" });
  } else if (type === "text-delta") {
    const text = message.parts.find((p) => p.type === "text" && p.id === part.id);
    if (text) text.text += part.delta;
    else message.parts.push({ type: "text", id: part.id, text: part.delta, state: "streaming" });
  } else if (type === "text-end") {
    const text = message.parts.find((p) => p.type === "text" && p.id === part.id);
    if (text) text.state = "done";
  } else if (type === "tool-input-available") {
    message.parts.push({
      type: `tool-${part.toolName}`, toolCallId: part.toolCallId,
      state: "input-available", input: part.input,
    });
  } else if (type === "tool-output-available") {
    const tool = message.parts.find((p) => p.toolCallId === part.toolCallId);
    if (tool) Object.assign(tool, { state: "output-available", output: part.output });
  } else if (type === "error") {
    message.parts.push({ type: "error", errorText: part.errorText, code: part.code });
    message.finished = true;
  } else if (type === "finish") {
    message.finished = true;
  } else if (type.startsWith("data-")) {
    message.parts.push({ type, data: part.data });
  }
  return message;
}

/**
 * The parts as shown: a job's progress reports collapse into its latest one, at the place
 * of its first.
 */
export function shownParts(parts) {
  const latestJob = new Map();
  for (const part of parts) {
    if (part.type === "data-job" && part.data) latestJob.set(part.data.job_id, part);
  }
  const seen = new Set();
  const out = [];
  for (const part of parts) {
    if (part.type !== "data-job" || !part.data) {
      out.push(part);
    } else if (!seen.has(part.data.job_id)) {
      seen.add(part.data.job_id);
      out.push(latestJob.get(part.data.job_id));
    }
  }
  return out;
}

/**
 * One chat's live feed. Parts may arrive twice — from the turn's own stream and from the chat's
 * tail, or again after a reconnect — so each event id is applied once. Every turn of a chat
 * runs alone (the chat's lease), so the parts between `start` and `finish` are one message.
 */
export class Feed {
  constructor(onChange) {
    this.onChange = onChange;
    this.seen = new Set();
    this.current = null;
  }

  /** Apply a part once; returns true when it was new. */
  accept(id, part) {
    if (id && id !== "0-0") {
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    if (part.type === "start") {
      this.current = fromStart(part);
    } else if (!this.current) {
      if (part.type !== "error") return false; // the middle of a turn we never saw start
      this.current = { ...fromStart({ messageId: `error-${Date.now()}` }), parts: [] };
    }
    const message = this.current;
    apply(message, part);
    if (message.finished) this.current = null;
    this.onChange(message, part);
    return true;
  }

  get responding() {
    return this.current !== null;
  }
}
