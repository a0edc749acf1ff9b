// The agent's markdown answers as safe DOM: paragraphs, headings, "- " and "1. " lists, tables,
// "> " quotes, fenced code, **bold**, *italic*, `code`, links, and the "  + added" / "  - removed"
// lines of a change report. Never innerHTML.

import { h } from "./dom.js";

const INLINE = /\*\*(.+?)\*\*|\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)|(https?:\/\/[^\s<>"'()]+[^\s<>"'().,;:!?])|`([^`\n]+)`|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])/g;

function link(url, label) {
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, label);
}

/** Inline markup of one line: bold, markdown links and bare URLs. */
export function inline(text) {
  const out = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    if (match[1] !== undefined) out.push(h("strong", {}, inline(match[1])));
    else if (match[2] !== undefined) out.push(link(match[3], match[2]));
    else if (match[4] !== undefined) out.push(link(match[4], match[4]));
    else if (match[5] !== undefined) out.push(h("code", {}, match[5]));
    else out.push(h("em", {}, inline(match[6])));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// A changed line is a line of the page's markdown: its list or heading marker is noise here.
const MARKER = /^(?:[-*+] |#{1,6} |\d+\. )/;

function classify(line) {
  if (/^\s{2,}\+ /.test(line)) return ["added", line.replace(/^\s+\+ /, "").replace(MARKER, "")];
  if (/^\s{2,}- /.test(line)) return ["removed", line.replace(/^\s+- /, "").replace(MARKER, "")];
  if (/^[-*] /.test(line)) return ["item", line.slice(2)];
  if (/^\d{1,3}[.)] /.test(line)) return ["numbered", line.replace(/^\d{1,3}[.)] /, "")];
  if (/^#{1,6} /.test(line)) return ["heading", line.replace(/^#{1,6} /, "")];
  if (/^> ?/.test(line)) return ["quote", line.replace(/^> ?/, "")];
  if (/^\s+… and \d+ more/.test(line)) return ["more", line.trim()];
  return ["line", line];
}

/** One paragraph block (lines between blank lines) as elements. */
function block(text) {
  const out = [];
  let list = null;
  let diff = null;
  let lines = [];
  const flushLines = () => {
    if (!lines.length) return;
    const p = h("p");
    lines.forEach((line, i) => {
      if (i) p.append(h("br"));
      p.append(...inline(line));
    });
    out.push(p);
    lines = [];
  };
  let quote = null;
  for (const raw of text.split("\n")) {
    const [kind, content] = classify(raw);
    if (kind !== "item" && kind !== "numbered") list = null;
    if (kind !== "quote") quote = null;
    if (kind !== "added" && kind !== "removed" && kind !== "more") diff = null;
    if (kind === "line") {
      lines.push(content);
      continue;
    }
    flushLines();
    if (kind === "item" || kind === "numbered") {
      const tag = kind === "item" ? "ul" : "ol";
      if (!list || list.tagName.toLowerCase() !== tag) out.push((list = h(tag)));
      list.append(h("li", {}, inline(content)));
    } else if (kind === "heading") {
      out.push(h("h3", { class: "answer-heading" }, inline(content)));
    } else if (kind === "quote") {
      if (!quote) out.push((quote = h("blockquote")));
      else quote.append(h("br"));
      quote.append(...inline(content));
    } else {
      if (!diff) out.push((diff = h("ul", { class: "diff" })));
      const label = kind === "added" ? "Added: " : kind === "removed" ? "Removed: " : "";
      diff.append(h("li", { class: `diff-${kind}` },
        label ? h("span", { class: "visually-hidden" }, label) : null, inline(content)));
    }
  }
  flushLines();
  return out;
}

const ROW = /^\s*\|.*\|\s*$/;
const RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(line) {
  return line.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
}

/** A markdown table (a header row, a rule, rows) as a scrollable <table>. */
function table(lines) {
  const head = h("thead", {}, h("tr", {}, cells(lines[0]).map((c) => h("th", { scope: "col" }, inline(c)))));
  const body = h("tbody", {}, lines.slice(2).map((row) =>
    h("tr", {}, cells(row).map((c) => h("td", {}, inline(c))))));
  return h("div", { class: "table-wrap answer-table" }, h("table", {}, head, body));
}

/** A block of lines: a table when it is one, else paragraphs, lists, quotes and diffs. */
function section(text) {
  const lines = text.split("\n");
  const start = lines.findIndex((line, i) => ROW.test(line) && RULE.test(lines[i + 1] || ""));
  if (start < 0) return block(text);
  let end = start + 2;
  while (end < lines.length && ROW.test(lines[end])) end += 1;
  const before = lines.slice(0, start).join("\n");
  const after = lines.slice(end).join("\n");
  return [...(before.trim() ? block(before) : []), table(lines.slice(start, end)),
    ...(after.trim() ? section(after) : [])];
}

/** The whole answer; fenced code blocks are kept whole, blank lines and all. */
export function rich(text) {
  const out = [];
  const pieces = text.split(/^```[^\n]*$/m);
  pieces.forEach((piece, i) => {
    if (i % 2 === 1) {
      out.push(h("pre", { class: "answer-code" }, h("code", {}, piece.replace(/^\n|\n$/g, ""))));
      return;
    }
    out.push(...piece.split(/\n{2,}/).filter((part) => part.trim()).flatMap(section));
  });
  return out;
}
