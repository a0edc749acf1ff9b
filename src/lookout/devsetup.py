"""What `lookout dev` does with the database before it starts the processes: migrate, and create
the demo account once. Run as a child (`lookout dev-setup`), so the supervisor that stays up all
along never loads the database and accounts stack (it held 59 MiB PSS; bench/footprint.py)."""

from __future__ import annotations

import json
import secrets

from lookout.access import accounts
from lookout.db import migrate, pool, repo

DEMO_EMAIL = "demo@lookout.local"
DEMO_CREDITS = 1000


async def prepare(dsn: str) -> str:
    """Migrate and seed; a JSON line for the supervisor: the demo's email, password and API key
    the first time, `{}` after."""
    await migrate.migrate(dsn)
    demo = await _seed(dsn)
    return json.dumps({"email": DEMO_EMAIL, "password": demo[0], "key": demo[1]} if demo else {})


async def _seed(dsn: str) -> tuple[str, str] | None:
    """Create the demo account once; return its password and API key the first time only."""
    async with pool.pool_context(dsn, max_size=2) as db:
        if await repo.get_user_by_email(db, email=DEMO_EMAIL):
            return None
        password = secrets.token_urlsafe(12)
        user = await accounts.create_user(db, email=DEMO_EMAIL, password=password)
        workspace = await accounts.create_workspace(
            db, name="Demo", owner_id=user.id, credits=DEMO_CREDITS
        )
        key = await accounts.create_key(db, workspace_id=workspace.id, name="demo")
        return password, key.text
