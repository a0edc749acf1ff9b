"""Reading robots.txt and sitemaps, without a network."""

from __future__ import annotations

import gzip

import pytest

from lookout.capabilities import inflate, links, sitemaps

BASE = "https://shop.example/sitemap.xml"


def test_a_sitemap_index_names_its_nested_sitemaps() -> None:
    body = b"""<?xml version="1.0" encoding="UTF-8"?>
    <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://shop.example/products.xml.gz</loc></sitemap>
      <sitemap><loc>/pages.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
    </sitemapindex>"""
    parsed = sitemaps.parse_sitemap(body, base=BASE, max_bytes=10**6)
    assert parsed.sitemaps == [
        "https://shop.example/products.xml.gz",
        "https://shop.example/pages.xml",
    ]
    assert parsed.pages == []


def test_a_gzipped_urlset_is_unpacked_and_normalized() -> None:
    body = gzip.compress(
        b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc> https://SHOP.example/a#top </loc></url><url><loc>https://shop.example/a</loc></url>
        <url><loc>https://shop.example/b?page=2</loc></url></urlset>"""
    )
    parsed = sitemaps.parse_sitemap(body, base=BASE, max_bytes=10**6)
    assert parsed.pages == ["https://shop.example/a", "https://shop.example/b?page=2"]


def test_entities_are_never_expanded() -> None:
    body = b"""<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/hostname">]>
    <urlset><url><loc>https://shop.example/&x;</loc></url></urlset>"""
    parsed = sitemaps.parse_sitemap(body, base=BASE, max_bytes=10**6)
    assert all("etc" not in page and "\n" not in page for page in parsed.pages)


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"<" + b" " * 5_000_000)
    assert len(bomb) < 10_000
    with pytest.raises(inflate.TooLarge):
        sitemaps.parse_sitemap(bomb, base=BASE, max_bytes=1_000_000)


def test_a_text_sitemap_is_one_url_a_line() -> None:
    parsed = sitemaps.parse_sitemap(
        b"https://shop.example/x\nnot a url\nhttps://shop.example/y\n", base=BASE, max_bytes=1000
    )
    assert parsed.pages == ["https://shop.example/x", "https://shop.example/y"]


def test_garbage_is_an_empty_sitemap() -> None:
    parsed = sitemaps.parse_sitemap(b"<html><body>Oops", base=BASE, max_bytes=1000)
    assert parsed == sitemaps.Sitemap(sitemaps=[], pages=[])


def test_robots_txt_gives_sitemaps_and_rules() -> None:
    robots = sitemaps.parse_robots(
        "User-agent: *\nDisallow: /cart\n\n"
        "Sitemap: https://shop.example/s1.xml\nsitemap: /s2.xml\n",
        "https://shop.example/robots.txt",
    )
    assert robots.sitemaps == ["https://shop.example/s1.xml", "https://shop.example/s2.xml"]
    assert not robots.allows("LookoutBot/0.1", "https://shop.example/cart/1")
    assert robots.allows("LookoutBot/0.1", "https://shop.example/shoes")


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/x.pdf", False),  # urllib.robotparser allowed it: it reads * and $ literally
        ("/docs/report.pdf", False),
        ("/x.pdf?download=1", True),  # $ anchors the end: this URL does not end in .pdf
        ("/search?q=boots", False),  # urllib.robotparser allowed it
        ("/search", False),
        ("/searchlight", False),
        ("/shoes/search", True),
        ("/shoes", True),
    ],
)
def test_robots_txt_wildcards_are_read_as_rfc_9309_says(path: str, allowed: bool) -> None:
    robots = sitemaps.parse_robots(
        "User-agent: *\nDisallow: /*.pdf$\nDisallow: /search*\n", "https://shop.example/robots.txt"
    )
    assert robots.allows("LookoutBot/0.1", f"https://shop.example{path}") is allowed


def test_robots_txt_group_for_our_agent_wins_over_the_default() -> None:
    robots = sitemaps.parse_robots(
        "User-agent: *\nDisallow: /\n\nUser-agent: LookoutBot\nAllow: /\n",
        "https://shop.example/robots.txt",
    )
    assert robots.allows("LookoutBot/0.1", "https://shop.example/shoes")
    assert not robots.allows("OtherBot/2.0", "https://shop.example/shoes")


def test_without_robots_everything_is_allowed() -> None:
    assert sitemaps.no_robots().allows("LookoutBot/0.1", "https://shop.example/cart")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM", "http://example.com/"),
        ("https://example.com:443/a#b", "https://example.com/a"),
        ("http://example.com:8080/a?b=1", "http://example.com:8080/a?b=1"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("ftp://example.com/", None),
        ("/relative", None),
        ("http://example.com:99999/", None),
        ("https://example.com/" + "a" * 3000, None),
    ],
)
def test_links_normalize(raw: str, expected: str | None) -> None:
    assert links.normalize(raw) == expected
