"""Both halves of a tool result are bounded: the text block and structuredContent, which the
official client checks against the tool's outputSchema."""

from __future__ import annotations

from tests.integration.factories import Site, TenantFactory, site, tenant_factory
from tests.integration.test_mcp_serve import Serve, serve, session_for, text_of

__all__ = ["serve", "site", "tenant_factory"]


async def test_structured_content_too_large_is_cut_and_says_how_to_get_the_rest(
    serve: Serve, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    url = await serve(mcp_text_limit=400, mcp_structured_limit=3_000)
    pages = [site.url(f"/page-{n}") for n in range(4)]

    async with session_for(url, tenant.key) as session:
        await session.list_tools()  # the client then validates results against outputSchema
        result = await session.call_tool("web_scrape", {"urls": pages})

    assert not result.is_error
    structured = result.structured_content
    assert structured is not None
    assert structured["truncated"] is True
    how = structured["truncation"]["how_to_get_the_rest"]
    assert "POST /v1/web/scrape" in how and "fewer URLs" in how
    assert structured["truncation"]["original_chars"] > 3_000
    assert [page["url"] for page in structured["pages"]][:1] == pages[:1]
    text = text_of(result)
    assert len(text) <= 400 and "structuredContent is shortened too" in text


async def test_a_result_that_fits_is_whole(
    serve: Serve, tenant_factory: TenantFactory, site: Site
) -> None:
    tenant = await tenant_factory()
    url = await serve()

    async with session_for(url, tenant.key) as session:
        result = await session.call_tool("web_scrape", {"url": site.url("/hello")})

    assert result.structured_content is not None
    assert "truncated" not in result.structured_content
