"""Clients generated from /v1/openapi.json build cleanly and make a typed call against the real
web process: a Python client from openapi-python-client, TypeScript types from openapi-typescript
(7.13, with typescript@5) used through openapi-fetch and type-checked by tsc --strict.

The npm packages are installed once per machine into a cache folder (npm's registry); the test
skips, saying why, only when a generator cannot be installed."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from lookout import app, devservices
from lookout.settings import Settings
from tests.integration.factories import Tenant, TenantFactory, tenant_factory

__all__ = ["tenant_factory"]

NPM_PACKAGES = ("openapi-typescript@7.13.0", "typescript@5.9.3", "openapi-fetch@0.17.0")
BIN = Path(sys.executable).parent


def _run(command: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
async def served(settings: Settings) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The web process on a real port, its public URL set to it; (url, its OpenAPI document)."""
    port = devservices.free_port()
    url = f"http://127.0.0.1:{port}"
    server = TestServer(app.create_app(settings.replace(public_url=url)), port=port)
    await server.start_server()
    try:
        client = server.make_url("/v1/openapi.json")
        import aiohttp

        async with aiohttp.ClientSession() as session, session.get(client) as answer:
            document = await answer.json()
        yield url, document
    finally:
        await server.close()


# The README's config: names the two non-JSON answers (a PNG screenshot, an Atom feed).
CLIENT_CONFIG = Path(__file__).resolve().parents[2] / "openapi-python-client.yaml"


@pytest.mark.timeout(400)
async def test_a_generated_python_client_makes_a_typed_call(
    served: tuple[str, dict[str, Any]], tenant_factory: TenantFactory, tmp_path: Path
) -> None:
    url, document = served
    generator = BIN / "openapi-python-client"
    if not generator.exists():
        pytest.skip("openapi-python-client is not installed (make install installs it)")
    tenant = await tenant_factory(credits=42)
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    assert document["servers"][0]["url"] == url

    # Given the client generated from the served document (no warning: it understood it all)
    done = await asyncio.to_thread(
        _run,
        [str(generator), "generate", "--path", "openapi.json", "--output-path", "lookout_client",
         "--meta", "none", "--config", str(CLIENT_CONFIG)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr

    # When it asks for the usage, through its generated function, with a workspace key
    sys.path.insert(0, str(tmp_path))
    try:
        client_module = importlib.import_module("lookout_client")
        usage_get = importlib.import_module("lookout_client.api.usage.usage_get")
        models = importlib.import_module("lookout_client.models")
        client = client_module.AuthenticatedClient(base_url=url, token=tenant.key)
        async with client as opened:
            answer = await usage_get.asyncio(client=opened)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("lookout_client")]:
            del sys.modules[name]

    # Then the answer is parsed into the generated types, down to the data's fields
    assert type(answer).__name__ == "UsageGetResponse200", answer
    assert isinstance(answer.data, models.Usage) and answer.data.balance == 42
    assert answer.data.ledger[0].kind == "grant" and answer.ok is True


def _npm_home() -> Path | None:
    """node_modules with the generators (installed once); None when npm cannot install them."""
    if shutil.which("npm") is None:
        return None
    key = hashlib.sha256(" ".join(NPM_PACKAGES).encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"lookout-openapi-clients-{os.getuid()}-{key}"
    if (home / "node_modules" / ".bin" / "tsc").exists():
        return home
    staging = home.with_name(f"{home.name}-{uuid.uuid4().hex[:6]}")
    staging.mkdir(parents=True)
    (staging / "package.json").write_text('{"private": true, "type": "module"}')
    done = _run(["npm", "install", "--no-audit", "--no-fund", *NPM_PACKAGES], staging, 600)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        return None
    if home.exists():  # another run finished first
        shutil.rmtree(staging, ignore_errors=True)
    else:
        staging.rename(home)
    return home


CALL = """\
import createClient from "openapi-fetch";
import type { paths, components } from "./api";

const client = createClient<paths>({
  baseUrl: %(url)s,
  headers: { Authorization: %(auth)s },
});
const { data, error } = await client.GET("/v1/usage");
if (!data) throw new Error(JSON.stringify(error));
const usage: components["schemas"]["Usage"] | null = data.data;
%(extra)s
console.log(JSON.stringify({ ok: data.ok, balance: usage?.balance, kind: usage?.ledger[0]?.kind }));
"""
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "target": "es2022",
        "module": "es2022",
        "moduleResolution": "bundler",
        "lib": ["es2022", "dom"],
        "skipLibCheck": True,
    },
    "files": ["call.ts"],
}


def _typescript_project(home: Path, url: str, tenant: Tenant, extra: str = "") -> Path:
    work = home / f"run-{uuid.uuid4().hex[:8]}"  # inside: node_modules is found upwards
    work.mkdir()
    (work / "package.json").write_text('{"private": true, "type": "module"}')
    (work / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    fields = {"url": json.dumps(url), "auth": json.dumps(f"Bearer {tenant.key}"), "extra": extra}
    (work / "call.ts").write_text(CALL % fields)
    return work


@pytest.mark.timeout(900)
async def test_typescript_types_type_check_a_call_and_it_works(
    served: tuple[str, dict[str, Any]], tenant_factory: TenantFactory
) -> None:
    url, document = served
    home = await asyncio.to_thread(_npm_home)
    if home is None:
        pytest.skip(f"npm could not install {', '.join(NPM_PACKAGES)} here")
    tenant = await tenant_factory(credits=42)
    bins = home / "node_modules" / ".bin"
    work = _typescript_project(home, url, tenant)
    wrong = _typescript_project(home, url, tenant, "const missing: number = usage!.balanse;")
    try:
        # Given the types generated from the served document
        for project in (work, wrong):
            (project / "openapi.json").write_text(json.dumps(document))
            made = await asyncio.to_thread(
                _run, [str(bins / "openapi-typescript"), "openapi.json", "-o", "api.ts"], project
            )
            assert made.returncode == 0, made.stdout + made.stderr

        # When a call through openapi-fetch is type-checked (strict) and run
        built = await asyncio.to_thread(_run, [str(bins / "tsc"), "-p", "."], work)
        assert built.returncode == 0, built.stdout + built.stderr
        ran = await asyncio.to_thread(_run, ["node", "call.js"], work, 60)

        # Then it type-checks, answers the typed data, and a misspelt field does not compile
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert json.loads(ran.stdout) == {"ok": True, "balance": 42, "kind": "grant"}
        refused = await asyncio.to_thread(_run, [str(bins / "tsc"), "-p", "."], wrong)
        assert refused.returncode != 0 and "balanse" in refused.stdout, refused.stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(wrong, ignore_errors=True)
