// The agent's plain-language answers as safe DOM: paragraphs, "- " lists, **bold**, links, and
// the "  + added" / "  - removed" lines of a change report. Never innerHTML.

import { h } from "./dom.js";

const INLINE = /\*\*(.+?)\*\*|\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)|(https?:\/\/[^\s<>"'()]+[^\s<>"'().,;:!?])/g;

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
    else out.push(link(match[4], match[4]));
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
  for (const raw of text.split("\n")) {
    const [kind, content] = classify(raw);
    if (kind !== "item") list = null;
    if (kind !== "added" && kind !== "removed" && kind !== "more") diff = null;
    if (kind === "line") {
      lines.push(content);
      continue;
    }
    flushLines();
    if (kind === "item") {
      if (!list) out.push((list = h("ul")));
      list.append(h("li", {}, inline(content)));
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

/** The whole answer. */
export function rich(text) {
  return text.split(/\n{2,}/).filter((part) => part.trim()).flatMap(block);
}
