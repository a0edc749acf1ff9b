// Small DOM helpers: build elements without innerHTML (every text is set as text, never markup).

/**
 * h("button", {class: "primary", onclick: fn, type: "button"}, "Send") -> <button>
 * Attributes: `class`, `text`, `on<event>` (a function), `dataset` (object), booleans (present
 * when true), anything else via setAttribute. Children: nodes, strings, arrays, null/false.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "value") el.value = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Tell screen-reader users about something that happened outside their focus. */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  window.setTimeout(() => { region.textContent = text; }, 50);
}

let ids = 0;
/** A page-unique id, for label/aria wiring. */
export function uid(prefix = "id") {
  ids += 1;
  return `${prefix}-${ids}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: "short" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "Mar 3, 2026, 14:05" (or just the time, today). */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  const today = new Date();
  return date.toDateString() === today.toDateString()
    ? `today ${timeOnly.format(date)}` : dateTime.format(date);
}

/** "in 42 minutes", "3 hours ago". */
export function fromNow(iso) {
  if (!iso) return "";
  const seconds = (new Date(iso).getTime() - Date.now()) / 1000;
  const steps = [[60, "second"], [3600, "minute"], [86400, "hour"], [Infinity, "day"]];
  let unit = 1;
  for (const [limit, name] of steps) {
    if (Math.abs(seconds) < limit) return relative.format(Math.round(seconds / unit), name);
    unit = limit;
  }
  return "";
}

/** A <time> element showing `when(iso)` with the exact moment as its title. */
export function timeEl(iso) {
  return h("time", { datetime: iso, title: iso ? new Date(iso).toString() : "" }, when(iso));
}

export function plural(count, one, many = `${one}s`) {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

/** Copy `text`; true when it worked (the Clipboard API needs a secure context). */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { class: "visually-hidden", readonly: true }, text);
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

/** A button that copies `getText()` and says so. */
export function copyButton(getText, label = "Copy") {
  const button = h("button", { type: "button", class: "secondary small" }, label);
  button.addEventListener("click", async () => {
    const done = await copyText(getText());
    button.textContent = done ? "Copied" : "Press Ctrl+C to copy";
    announce(done ? "Copied to the clipboard." : "Copy did not work; select the text and copy it.");
    window.setTimeout(() => { button.textContent = label; }, 2000);
  });
  return button;
}
