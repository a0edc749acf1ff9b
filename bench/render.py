"""Benchmark: rendered pages/s and CPU and memory per page, beside plain fetches of the same pages,
in the same run.

    .venv/bin/python bench/render.py [--pages 40] [--concurrency 2]

A local aiohttp site (in this process, on loopback) serves `pages` JavaScript shells, each of which
fetches a JSON document and builds its text from it. web.scrape reads every page twice through
the registry's executor: `render: never` (the plain fetch: only the shell's text) and
`render: always` (Debian's chromium through our guarded proxy, LOOKOUT_BROWSER_PAGES =
`concurrency`). CPU is the user+system time of this process and every descendant (Playwright's
driver, chromium and its renderers, reaped ones included through their parents' child times),
read from /proc before and after each run; memory is the summed PSS of the same processes,
sampled every 50 ms. Prints each figure and the ratio rendered/plain. No target: the figures say
what a rendered page costs (it is billed 3 credits against 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import lookout.capabilities  # noqa: F401 - registers the verbs
from lookout.capabilities import browser, fetch, registry
from lookout.settings import Settings

TICK = os.sysconf("SC_CLK_TCK")
PAGE = """<!doctype html><html><head><title>Item {n}</title></head><body><div id="app"></div>
<script>fetch('/data/{n}.json').then(r => r.json()).then(d => {{
  document.getElementById('app').innerHTML = '<main><h1>' + d.name + '</h1><p>' + d.text +
  '</p></main>'; }});</script></body></html>"""


def _tree(root: int) -> list[int]:
    """`root` and every live descendant, from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def cpu_s(root: int) -> float:
    total = 0
    for pid in _tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def pss_mib(root: int) -> float:
    """Summed PSS (shared pages split between their sharers: chromium's processes share a lot,
    and summed RSS would count it once per process)."""
    total = 0
    for pid in _tree(root):
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


async def _serve(pages: int) -> tuple[web.AppRunner, str]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE.format(n=request.match_info["n"]), content_type="text/html")

    async def data(request: web.Request) -> web.Response:
        n = request.match_info["n"]
        body = {"name": f"Item {n}", "text": f"Item {n} is in stock at {n} euros. " * 10}
        return web.Response(text=json.dumps(body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    app.router.add_get("/data/{n}.json", data)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def _run(
    urls: list[str], render: str, settings: Settings, pool: browser.Pool
) -> dict[str, Any]:
    verb = registry.get("web.scrape")
    peak, samples = [0.0], []
    me = os.getpid()

    async def sample() -> None:
        while True:
            value = pss_mib(me)
            peak[0] = max(peak[0], value)
            samples.append(value)
            await asyncio.sleep(0.05)

    sampler = asyncio.ensure_future(sample())
    cpu0, t0, done = cpu_s(me), time.perf_counter(), 0
    async with fetch.open_session(settings) as http:
        ctx = registry.VerbContext(http=http, settings=settings, progress=_nothing, browser=pool)
        for start in range(0, len(urls), 20):
            data = registry.validate_input(verb, {"urls": urls[start : start + 20],
                                                  "render": render})  # fmt: skip
            out = await verb.execute(data, ctx)
            done += sum(1 for page in out["pages"] if "in stock" in (page["markdown"] or ""))
    seconds, cpu = time.perf_counter() - t0, cpu_s(me) - cpu0
    sampler.cancel()
    return {"pages": len(urls), "ok": done, "s": seconds, "cpu_s": cpu, "peak_mib": peak[0],
            "mean_mib": sum(samples) / max(1, len(samples))}  # fmt: skip


async def _nothing(done: int, total: int) -> None:
    return None


async def main(pages: int, concurrency: int) -> None:
    runner, base = await _serve(pages)
    settings = Settings.from_env(
        {"DATABASE_URL": "postgresql://unused/unused", "REDIS_URL": "redis://unused:6379/0",
         "LOOKOUT_SECRET_KEY": "bench-secret-key-" + "x" * 16,
         "LOOKOUT_PUBLIC_URL": "http://lookout.test"},
        allow_private_networks=True, browser_pages=concurrency,
    )  # fmt: skip
    pool = browser.Pool(settings)
    if not pool.available:
        sys.exit(f"chromium is missing: {browser.INSTALL}")
    urls = [f"{base}/p/{n}" for n in range(pages)]
    try:
        plain = await _run(urls, "never", settings, pool)
        await pool.render(urls[0])  # launch chromium outside the timed run
        rendered = await _run(urls, "always", settings, pool)
    finally:
        await pool.close()
        await runner.cleanup()
    rows = [("plain fetch", plain), ("rendered", rendered)]
    print(f"{pages} JavaScript shell pages, {concurrency} rendered at a time")
    for name, row in rows:
        print(f"  {name:12} {row['pages'] / row['s']:8.1f} pages/s  "
              f"{1000 * row['cpu_s'] / row['pages']:7.1f} ms CPU/page  "
              f"peak {row['peak_mib']:6.0f} MiB  mean {row['mean_mib']:6.0f} MiB  "
              f"content read: {row['ok']}/{row['pages']}")  # fmt: skip
    rate = (rendered["pages"] / rendered["s"]) / (plain["pages"] / plain["s"])
    cpu = rendered["cpu_s"] / max(plain["cpu_s"], 1e-6)
    extra = (rendered["peak_mib"] - plain["peak_mib"]) / concurrency
    print(
        f"  rendered / plain: {rate:.3f}x the pages/s, {cpu:.1f}x the CPU per page; "
        f"+{extra:.0f} MiB per concurrent rendered page (peak over the plain run's peak)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.pages, args.concurrency))
