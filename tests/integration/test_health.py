from __future__ import annotations

from typing import Any

from lookout import app, devservices
from lookout.settings import Settings


async def test_healthz_answers_while_the_process_is_up(
    aiohttp_client: Any, settings: Settings
) -> None:
    client = await aiohttp_client(app.create_app(settings))

    response = await client.get("/healthz")

    assert response.status == 200
    assert (await response.json())["ok"] is True


async def test_readyz_is_200_when_postgres_and_redis_answer(
    aiohttp_client: Any, settings: Settings
) -> None:
    client = await aiohttp_client(app.create_app(settings))

    response = await client.get("/readyz")

    assert response.status == 200
    assert await response.json() == {"ok": True, "checks": {"postgres": "ok", "redis": "ok"}}


async def test_readyz_is_503_naming_redis_when_it_is_down(
    aiohttp_client: Any, settings: Settings
) -> None:
    nothing_listens = f"redis://127.0.0.1:{devservices.free_port()}/0"
    client = await aiohttp_client(app.create_app(settings.replace(redis_url=nothing_listens)))

    response = await client.get("/readyz")

    assert response.status == 503
    assert await response.json() == {
        "ok": False,
        "checks": {"postgres": "ok", "redis": "unavailable"},
    }


async def test_unknown_route_answers_the_envelope(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(app.create_app(settings))

    response = await client.get("/v1/nothing-here")

    assert response.status == 404
    body = await response.json()
    assert body["ok"] is False and body["data"] is None
    assert body["error"]["code"] == "not_found"
    assert body["meta"]["request_id"] == response.headers["X-Request-Id"]
