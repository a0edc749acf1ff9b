// A verb call as a collapsible card: what was asked, and a readable rendering of the result.

import { h, plural, when } from "./dom.js";

const LABELS = {
  web_scrape: "Read a page",
  web_discover: "Find pages",
  maps_search: "Find places",
  maps_reviews: "Read reviews",
};
const EXCERPT = 320;
const LISTED = 12;

export function host(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Plain text from the page's markdown: no headings (the title says it), no list markers. */
function plainText(markdown) {
  return (markdown || "").split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .map((line) => line.replace(/^\s*(?:[-*+]|\d+\.)\s+/, "").replace(/[*_`]+/g, "").trim())
    .filter(Boolean)
    .reduce((text, line) => (!text ? line : /[.!?:;]$/.test(text) ? `${text} ${line}` : `${text} · ${line}`), "");
}

function excerpt(text) {
  const clean = (text || "").replace(/\s+/g, " ").trim();
  if (clean.length <= EXCERPT) return clean;
  const cut = clean.slice(0, EXCERPT);
  const stop = cut.lastIndexOf(". ");
  return (stop > EXCERPT / 2 ? cut.slice(0, stop + 1) : cut) + " …";
}

function outLink(url, label) {
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, label || url);
}

function stars(rating) {
  if (rating === null || rating === undefined) return null;
  return h("span", { class: "rating", title: `Rated ${rating} out of 5` },
    `★ ${Number(rating).toFixed(1)}`);
}

function scrapeResult(output) {
  return (output.pages || []).map((page) => {
    if (page.error) {
      return h("div", { class: "result-item failed" },
        `Couldn't read ${host(page.url)}: ${page.error.message}`);
    }
    const links = page.links || [];
    return h("article", { class: "result-item" },
      h("h4", {}, outLink(page.final_url || page.url, page.title || host(page.url))),
      h("p", { class: "meta" },
        [host(page.final_url || page.url), page.status ? `HTTP ${page.status}` : null,
          page.fetched_at ? `read ${when(page.fetched_at)}` : null].filter(Boolean).join(" · ")),
      h("p", { class: "excerpt" }, excerpt(page.text || plainText(page.markdown)) || "The page has no text."),
      links.length ? h("details", { class: "links" },
        h("summary", {}, `${plural(links.length, "link")} on the page`),
        h("ul", {}, links.slice(0, LISTED).map((url) => h("li", {}, outLink(url)))),
        links.length > LISTED ? h("p", { class: "meta" }, `… and ${links.length - LISTED} more`) : null,
      ) : null,
    );
  });
}

function discoverResult(output) {
  const links = output.links || [];
  if (!links.length) return [h("p", {}, "No pages found.")];
  return [
    h("ul", { class: "link-list" }, links.slice(0, LISTED).map((item) => h("li", {},
      outLink(item.url, item.title || item.url),
      item.title ? h("span", { class: "meta" }, ` — ${host(item.url)}`) : null,
      item.snippet ? h("p", { class: "meta" }, item.snippet) : null))),
    links.length > LISTED || output.truncated
      ? h("p", { class: "meta" }, `${plural(links.length, "link")} in all${output.truncated ? ", and there are more" : ""}.`)
      : null,
  ];
}

function placesResult(output) {
  const places = output.places || [];
  if (!places.length) return [h("p", {}, "No places found.")];
  return [h("ul", { class: "place-list" }, places.map((place) => h("li", {},
    h("strong", {}, place.url ? outLink(place.url, place.name || "A place") : (place.name || "A place")),
    " ", stars(place.rating),
    place.reviews_count ? h("span", { class: "meta" }, ` (${plural(place.reviews_count, "rating")})`) : null,
    h("p", { class: "meta" }, [place.category, place.address].filter(Boolean).join(" · ")))))];
}

function reviewsResult(output) {
  const reviews = output.reviews || [];
  const place = output.place || {};
  return [
    h("p", {}, h("strong", {}, place.name || "The place"), " ", stars(place.rating)),
    reviews.length
      ? h("ul", { class: "review-list" }, reviews.map((review) => h("li", {},
        h("p", { class: "meta" }, stars(review.rating), " ", review.author || "Someone",
          review.published_at ? ` · ${when(review.published_at)}` : ""),
        h("p", {}, review.text || "(no text)"))))
      : h("p", {}, "No reviews yet."),
  ];
}

const RESULTS = {
  web_scrape: scrapeResult,
  web_discover: discoverResult,
  maps_search: placesResult,
  maps_reviews: reviewsResult,
};

function inputList(input) {
  const entries = Object.entries(input || {});
  if (!entries.length) return h("p", { class: "meta" }, "No input.");
  return h("dl", { class: "input-list" }, entries.map(([key, value]) => [
    h("dt", {}, key.replaceAll("_", " ")),
    h("dd", {}, Array.isArray(value) ? value.join(", ") : typeof value === "object"
      ? JSON.stringify(value) : String(value)),
  ]));
}

/** What the call was about, in a few words: the URL, query or place. */
function target(input) {
  if (!input) return "";
  if (Array.isArray(input.urls)) {
    const hosts = [...new Set(input.urls.map(host))].join(", ");
    return input.urls.length > 1 ? `${input.urls.length} pages on ${hosts}` : hosts;
  }
  return input.url ? host(input.url) : (input.query || input.place_ref || "");
}

/** The headline of a finished call: the page title, or how many results. */
function headline(tool, output) {
  if (!output || output.error) return "";
  if (tool === "web_scrape") {
    return (output.pages || []).map((p) => p.title || (p.error ? "" : host(p.url))).filter(Boolean).join(", ");
  }
  if (tool === "web_discover") return plural((output.links || []).length, "page");
  if (tool === "maps_search") return plural((output.places || []).length, "place");
  if (tool === "maps_reviews") return plural((output.reviews || []).length, "review");
  return "";
}

/** The card of one tool part; `openCards` keeps which cards a person opened across re-renders. */
export function toolCard(part, openCards) {
  const tool = part.type.slice("tool-".length);
  const done = part.state === "output-available";
  const failed = done && part.output && part.output.error;
  const status = !done ? "Working…" : failed ? "Failed" : "Done";
  const title = headline(tool, part.output);
  const card = h("details", { class: `tool-card ${failed ? "failed" : done ? "done" : "working"}`,
    dataset: { tool, callId: part.toolCallId } });
  card.open = openCards.has(part.toolCallId);
  card.addEventListener("toggle", () => {
    if (card.open) openCards.add(part.toolCallId);
    else openCards.delete(part.toolCallId);
  });
  let body;
  if (!done) body = [h("p", { class: "meta" }, "Waiting for the result…")];
  else if (failed) body = [h("p", { class: "failed", role: "note" }, part.output.error.message)];
  else if (RESULTS[tool]) body = RESULTS[tool](part.output);
  else body = [h("pre", { class: "json" }, JSON.stringify(part.output, null, 2))];
  card.append(
    h("summary", {},
      h("span", { class: "tool-name" }, LABELS[tool] || tool.replaceAll("_", " ")),
      h("span", { class: "tool-verb" }, tool.replace("_", ".")),
      title ? h("span", { class: "tool-title" }, title) : h("span", { class: "tool-target" }, target(part.input)),
      h("span", { class: "tool-status", "aria-label": `status: ${status}` }, status)),
    h("div", { class: "tool-body" },
      h("h4", { class: "section-label" }, "Asked"), inputList(part.input),
      h("h4", { class: "section-label" }, "Result"), body),
  );
  return card;
}

/** A job's progress, from a data-job part. */
export function jobProgress(data) {
  const progress = data.progress || {};
  const total = progress.total || 0;
  const doneCount = progress.done || 0;
  const label = total
    ? `Working in the background: ${doneCount} of ${total} done`
    : `Working in the background (${data.status})`;
  const bar = h("progress", { max: total || null, "aria-label": label });
  if (total) bar.value = doneCount;
  const finished = ["succeeded", "failed", "cancelled"].includes(data.status);
  return h("div", { class: `job ${data.status}` },
    h("p", { class: "meta" }, finished ? `Background job ${data.status}.` : label),
    finished ? null : bar);
}
