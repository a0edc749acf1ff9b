"""Input and output schemas of the web verbs. Unknown keys are rejected; every string and list is
bounded, outputs included, because the doors hand these schemas to clients and models as-is."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from marshmallow import (
    ValidationError,
    fields,
    post_load,
    validate,
    validates_schema,
)

from lookout.schema import strict

MAX_URL = 2048
MAX_URLS = 20
MAX_CHARS = 500_000
MAX_LINKS_PER_PAGE = 1000
MAX_DISCOVER = 5000
MAX_SEARCH_RESULTS = 50
FORMATS = ("markdown", "text", "links", "html", "data", "screenshot")
RENDER_MODES = ("auto", "never", "always")
MAX_WAIT_MS = 10_000
MAX_SELECTOR = 500


StrictSchema = strict.StrictSchema  # the one definition: lookout.schema.strict


def _http_url(value: str) -> None:
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ValidationError("Not a valid URL.") from None
    if parts.scheme.lower() not in {"http", "https"} or not parts.netloc:
        raise ValidationError("Must be an absolute http or https URL.")


def http_url(description: str, **kwargs: Any) -> fields.String:
    return fields.String(
        validate=[validate.Length(min=1, max=MAX_URL), _http_url],
        metadata={"description": description, "format": "uri"},
        **kwargs,
    )


def bounded_str(limit: int, description: str, **kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Length(max=limit), metadata={"description": description}, **kwargs
    )


class WaitFor(fields.Field):  # type: ignore[type-arg]
    """A CSS selector to wait for (1 to 500 characters), or milliseconds to wait (0 to 10,000)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value <= MAX_WAIT_MS:
                raise ValidationError(f"Milliseconds must be 0 to {MAX_WAIT_MS}.")
            return value
        if isinstance(value, str) and 1 <= len(value.strip()) <= MAX_SELECTOR:
            return value.strip()
        raise ValidationError(
            f"Send a CSS selector (1 to {MAX_SELECTOR} characters) or milliseconds (0 to "
            f"{MAX_WAIT_MS})."
        )


class ErrorSchema(StrictSchema):
    code = bounded_str(
        64, "Stable error code, e.g. fetch_failed or blocked_destination.", required=True
    )
    message = bounded_str(2000, "What went wrong, in words.", required=True)


class ScrapeInputSchema(StrictSchema):
    url = http_url("One page to scrape; shorthand for urls with one item.")
    urls = fields.List(
        http_url("A page to scrape."),
        validate=validate.Length(min=1, max=MAX_URLS),
        metadata={"description": f"Pages to scrape, 1 to {MAX_URLS}; fetched concurrently."},
    )
    formats = fields.List(
        fields.String(validate=validate.OneOf(FORMATS)),
        validate=validate.Length(min=1, max=len(FORMATS)),
        load_default=lambda: ["markdown"],
        metadata={"description": "What to return for each page (default: markdown)."},
    )
    only_main_content = fields.Boolean(
        load_default=True,
        metadata={"description": "Leave out navigation, headers, footers and sidebars."},
    )
    max_chars = fields.Integer(
        load_default=100_000,
        validate=validate.Range(min=1000, max=MAX_CHARS),
        metadata={"description": "Cut markdown, text and html of each page to this length."},
    )
    render = fields.String(
        load_default="auto",
        validate=validate.OneOf(RENDER_MODES),
        metadata={
            "description": "Run the page's JavaScript in a browser: auto (default) only when the "
            "fetched HTML is a JavaScript shell, never, or always. A rendered page costs 3 "
            "credits (render always or a screenshot reserves 3 per page; auto reserves 1)."
        },
    )
    wait_for = WaitFor(
        metadata={
            "description": "When rendering, wait for this CSS selector to appear, or this many "
            f"milliseconds (0 to {MAX_WAIT_MS}), before reading the page.",
            "oneOf": [
                {"type": "string", "minLength": 1, "maxLength": MAX_SELECTOR},
                {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS},
            ],
        }
    )
    screenshot = fields.String(
        validate=validate.OneOf(("viewport", "full")),
        metadata={
            "description": "With formats screenshot: the first screen (viewport, the default, "
            "1280x800) or "
            "the full page (cut at 8000 px)."
        },
    )

    @validates_schema
    def _one_way_to_name_pages(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("url" in data) == ("urls" in data):
            raise ValidationError("Send either url or urls (a list of 1 to 20 URLs).", "urls")

    @post_load
    def _normalize(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        urls = data.pop("urls", None) or [data.pop("url")]
        data["urls"] = list(dict.fromkeys(urls))
        data["formats"] = list(dict.fromkeys(data["formats"]))
        return data


class PageMetadataSchema(StrictSchema):
    title = bounded_str(
        1000, "The page's <title> (else og:title, else its first h1).", allow_none=True
    )
    description = bounded_str(
        500, "The page's meta description or og:description.", allow_none=True
    )
    language = bounded_str(
        64, "Language tag from <html lang>, the page's meta or its JSON-LD.", allow_none=True
    )
    canonical_url = bounded_str(
        MAX_URL, "Absolute URL of <link rel=canonical> (else og:url).", allow_none=True
    )
    published_at = bounded_str(
        64,
        "When the page says it was published (ISO 8601: as stated, or read from a date written"
        " out with its month's name).",
        allow_none=True,
    )
    modified_at = bounded_str(
        64,
        "When the page says it was last modified (ISO 8601: as stated, or read from a date"
        " written out with its month's name).",
        allow_none=True,
    )
    author = bounded_str(
        200, "Who the page says wrote it (meta author, JSON-LD, microdata).", allow_none=True
    )


class PageDataSchema(StrictSchema):
    """The product facts of a page's structured data (schema.org JSON-LD / microdata, meta)."""

    name = bounded_str(300, "The product's name.", allow_none=True)
    price = fields.Float(allow_none=True, metadata={"description": "The offer's price."})
    currency = bounded_str(8, "ISO 4217 code of the price, when stated.", allow_none=True)
    availability = fields.String(
        allow_none=True, validate=validate.OneOf(("in_stock", "out_of_stock")),
        metadata={"description": "in_stock or out_of_stock, when stated."},
    )  # fmt: skip
    source = fields.String(
        required=True, validate=validate.OneOf(("json-ld", "microdata", "meta")),
        metadata={"description": "Where the facts were read."},
    )  # fmt: skip


class ScreenshotSchema(StrictSchema):
    url = bounded_str(
        MAX_URL, "Where to GET the PNG (the job's artifact; same credentials).", required=True
    )
    content_type = fields.String(
        required=True, validate=validate.OneOf(("image/png",)), metadata={"description": "PNG."}
    )
    width = fields.Integer(required=True, metadata={"description": "Pixels wide."})
    height = fields.Integer(required=True, metadata={"description": "Pixels high."})
    bytes = fields.Integer(required=True, metadata={"description": "Size of the PNG."})
    expires_at = fields.AwareDateTime(
        required=True, metadata={"description": "When the PNG is deleted."}
    )


class ScrapedPageSchema(StrictSchema):
    url = bounded_str(MAX_URL, "The URL as asked.", required=True)
    final_url = bounded_str(MAX_URL, "The URL after redirects.", allow_none=True)
    status = fields.Integer(allow_none=True, metadata={"description": "HTTP status."})
    title = bounded_str(1000, "The page title.", allow_none=True)
    markdown = bounded_str(MAX_CHARS, "Content as markdown.", allow_none=True)
    text = bounded_str(MAX_CHARS, "Content as plain text.", allow_none=True)
    html = bounded_str(MAX_CHARS, "Cleaned HTML of the content.", allow_none=True)
    links = fields.List(
        fields.String(validate=validate.Length(max=MAX_URL)),
        validate=validate.Length(max=MAX_LINKS_PER_PAGE),
        allow_none=True,
        metadata={"description": "Absolute URLs of the page's links."},
    )
    metadata = fields.Nested(
        PageMetadataSchema,
        allow_none=True,
        metadata={"description": "What the page states about itself; null if it failed."},
    )
    content_hash = bounded_str(
        80, "Hash of the normalized main text; equal = same content.", allow_none=True
    )
    fetched_at = fields.AwareDateTime(
        required=True, metadata={"description": "When it was fetched."}
    )
    error = fields.Nested(
        ErrorSchema, allow_none=True, metadata={"description": "Why this page failed, or null."}
    )
    data = fields.Nested(
        PageDataSchema, allow_none=True,
        metadata={"description": "Product facts from structured data (the data format), or null."},
    )  # fmt: skip
    rendered = fields.Boolean(
        metadata={"description": "Whether the page was rendered in a browser (its scripts run)."}
    )
    screenshot = fields.Nested(
        ScreenshotSchema, allow_none=True,
        metadata={"description": "The page's screenshot (the screenshot format), or null."},
    )  # fmt: skip


class ScrapeOutputSchema(StrictSchema):
    pages = fields.List(
        fields.Nested(ScrapedPageSchema), validate=validate.Length(max=MAX_URLS), required=True
    )


class DiscoverInputSchema(StrictSchema):
    url = http_url("The site to map: its sitemaps and the links of its pages.")
    query = bounded_str(
        500,
        "Search the web instead (needs a configured search provider); with url, search only "
        "that site.",
    )
    limit = fields.Integer(
        validate=validate.Range(min=1, max=MAX_DISCOVER),
        metadata={
            "description": f"At most this many links: 1 to {MAX_DISCOVER} (default 100) mapping "
            f"a site, 1 to {MAX_SEARCH_RESULTS} (default 10) with query."
        },
    )
    include_subdomains = fields.Boolean(
        load_default=False, metadata={"description": "Also list links on subdomains of the site."}
    )
    search = bounded_str(200, "Keep only links whose URL or title contains this text.")

    @validates_schema
    def _something_to_discover(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "url" not in data and not data.get("query"):
            raise ValidationError("Send a url to map a site, or a query to search the web.", "url")
        if data.get("query") and data.get("limit", 0) > MAX_SEARCH_RESULTS:
            problem = f"Must be at most {MAX_SEARCH_RESULTS} with a query."
            raise ValidationError(problem, "limit")

    @post_load
    def _default_limit(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        data.setdefault("limit", 10 if data.get("query") else 100)
        return data


class DiscoveredLinkSchema(StrictSchema):
    url = bounded_str(MAX_URL, "An absolute URL.", required=True)
    title = bounded_str(1000, "Its title or link text, when known.", allow_none=True)
    snippet = bounded_str(500, "A short description, when known.", allow_none=True)
    lastmod = bounded_str(40, "When the site's sitemap says it last changed, when it does.")


class DiscoverOutputSchema(StrictSchema):
    links = fields.List(
        fields.Nested(DiscoveredLinkSchema),
        validate=validate.Length(max=MAX_DISCOVER),
        required=True,
    )
    truncated = fields.Boolean(
        required=True, metadata={"description": "True when more links exist than were returned."}
    )
    source = fields.String(
        validate=validate.OneOf(("site", "search")),
        metadata={"description": "Where the links came from: the site itself, or a web search."},
    )
