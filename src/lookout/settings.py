"""Settings: read once from the environment into a frozen object (the only reader of os.environ)."""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from lookout.errors import ConfigError

_SECRET = {"secret": True}


def _bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false), got {raw!r}")


def _list(raw: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def _field(env: str, default: Any = dataclasses.MISSING, *, secret: bool = False) -> Any:
    metadata = {"env": env, "secret": secret}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


# After the shutdown grace period, how long cut-off turns have to write their "interrupted"
# answer (lookout.ops.shutdown); `lookout dev` waits for both before it kills a process.
SHUTDOWN_CANCEL_WAIT_S = 5.0


@dataclasses.dataclass(frozen=True)
class Settings:
    """Every setting Lookout reads; see `.env.example` for what each one does."""

    database_url: str = _field("DATABASE_URL", secret=True)
    redis_url: str = _field("REDIS_URL", secret=True)
    secret_key: str = _field("LOOKOUT_SECRET_KEY", secret=True)
    port: int = _field("PORT", 8000)
    host: str = _field("LOOKOUT_HOST", "0.0.0.0")
    public_url: str = _field("LOOKOUT_PUBLIC_URL", "")
    allowed_origins: tuple[str, ...] = _field("LOOKOUT_ALLOWED_ORIGINS", ())
    cookie_secure: bool = _field("LOOKOUT_COOKIE_SECURE", False)
    forwarded_hops: int = _field("LOOKOUT_FORWARDED_HOPS", 0)
    session_days: int = _field("LOOKOUT_SESSION_DAYS", 14)
    default_credits: int = _field("LOOKOUT_DEFAULT_CREDITS", 100)
    rate_limit_per_minute: int = _field("LOOKOUT_RATE_LIMIT_PER_MINUTE", 120)
    max_body_bytes: int = _field("LOOKOUT_MAX_BODY_BYTES", 1024 * 1024)
    job_wait_s: float = _field("LOOKOUT_JOB_WAIT_S", 10.0)
    job_ttl_hours: int = _field("LOOKOUT_JOB_TTL_HOURS", 24)
    allow_private_networks: bool = _field("LOOKOUT_ALLOW_PRIVATE_NETWORKS", False)
    allowed_ports: tuple[str, ...] = _field("LOOKOUT_ALLOWED_PORTS", ())
    fetch_timeout_s: float = _field("LOOKOUT_FETCH_TIMEOUT_S", 20.0)
    fetch_connect_timeout_s: float = _field("LOOKOUT_FETCH_CONNECT_TIMEOUT_S", 5.0)
    fetch_max_bytes: int = _field("LOOKOUT_FETCH_MAX_BYTES", 5 * 1024 * 1024)
    fetch_concurrency: int = _field("LOOKOUT_FETCH_CONCURRENCY", 8)
    # Processes that read fetched pages, per web / worker process (capabilities/readers.py);
    # 0: one per core, at most fetch_concurrency.
    read_processes: int = _field("LOOKOUT_READ_PROCESSES", 0)
    # Seconds a page reader may sit idle before it exits (and with the last, the forkserver);
    # the next page starts them again. 0: they stay until shutdown.
    read_idle_s: float = _field("LOOKOUT_READ_IDLE_S", 60.0)
    # How much lower than their parent's the readers' CPU priority is (Unix niceness, 0-19):
    # reading is batch work, and a call's round trips wait behind it for a core.
    read_nice: int = _field("LOOKOUT_READ_NICE", 10)
    user_agent: str = _field(
        "LOOKOUT_USER_AGENT", "LookoutBot/0.1 (+https://github.com/lookout; self-hosted)"
    )
    min_watch_minutes: int = _field("LOOKOUT_MIN_WATCH_MINUTES", 5)
    chat_job_deadline_s: float = _field("LOOKOUT_CHAT_JOB_DEADLINE_S", 300.0)
    max_watches: int = _field("LOOKOUT_MAX_WATCHES", 50)
    notify_allow_private: bool = _field("LOOKOUT_NOTIFY_ALLOW_PRIVATE", False)
    notify_retry_s: float = _field("LOOKOUT_NOTIFY_RETRY_S", 30.0)
    search_url: str = _field("LOOKOUT_SEARCH_URL", "")
    nominatim_url: str = _field("LOOKOUT_NOMINATIM_URL", "https://nominatim.openstreetmap.org")
    nominatim_public: bool = _field("LOOKOUT_NOMINATIM_PUBLIC", False)
    maps_cache_ttl_s: int = _field("LOOKOUT_MAPS_CACHE_TTL_S", 86400)
    google_places_url: str = _field("LOOKOUT_GOOGLE_PLACES_URL", "https://places.googleapis.com")
    google_places_key: str = _field("LOOKOUT_GOOGLE_PLACES_KEY", "", secret=True)
    maps_hours_and_prices: bool = _field("LOOKOUT_MAPS_HOURS_AND_PRICES", False)
    mcp_text_limit: int = _field("LOOKOUT_MCP_TEXT_LIMIT", 20_000)
    mcp_structured_limit: int = _field("LOOKOUT_MCP_STRUCTURED_LIMIT", 100_000)
    mcp_page_size: int = _field("LOOKOUT_MCP_PAGE_SIZE", 50)
    oauth_access_ttl_s: int = _field("LOOKOUT_OAUTH_ACCESS_TTL_S", 3600)
    oauth_register_per_minute: int = _field("LOOKOUT_OAUTH_REGISTER_PER_MINUTE", 10)
    oauth_client_idle_days: int = _field("LOOKOUT_OAUTH_CLIENT_IDLE_DAYS", 30)
    llm_base_url: str = _field("LOOKOUT_LLM_BASE_URL", "")
    llm_model: str = _field("LOOKOUT_LLM_MODEL", "")
    llm_api_key: str = _field("LOOKOUT_LLM_API_KEY", "", secret=True)
    # Credits one LLM-planned turn's verb calls may reserve; past it the turn stops and says so.
    llm_turn_credits: int = _field("LOOKOUT_LLM_TURN_CREDITS", 20)
    openai_api_key: str = _field("OPENAI_API_KEY", "", secret=True)
    db_pool_min: int = _field("LOOKOUT_DB_POOL_MIN", 1)
    db_pool_max: int = _field("LOOKOUT_DB_POOL_MAX", 10)
    # 0: sized to the machine (lookout.cli.worker_size): a process per core, and threads for
    # 8 messages a core across them, at most a process's database connections.
    worker_processes: int = _field("LOOKOUT_WORKER_PROCESSES", 0)
    worker_threads: int = _field("LOOKOUT_WORKER_THREADS", 0)
    # The first `lookout worker` process also sends the periodic ticks (`lookout dev` sets it).
    worker_scheduler: bool = _field("LOOKOUT_WORKER_SCHEDULER", False)
    event_loop: str = _field("LOOKOUT_EVENT_LOOP", "uvloop")
    log_format: str = _field("LOOKOUT_LOG_FORMAT", "text")
    log_level: str = _field("LOOKOUT_LOG_LEVEL", "INFO")
    metrics_token: str = _field("LOOKOUT_METRICS_TOKEN", "", secret=True)
    metrics_port: int = _field("LOOKOUT_METRICS_PORT", 0)
    metrics_host: str = _field("LOOKOUT_METRICS_HOST", "127.0.0.1")
    metrics_dir: str = _field("LOOKOUT_METRICS_DIR", "")
    shutdown_grace_s: float = _field("LOOKOUT_SHUTDOWN_GRACE_S", 30.0)
    status_max_overdue_s: float = _field("LOOKOUT_STATUS_MAX_OVERDUE_S", 300.0)
    # Sessions and sign-up (see `_check_accounts`).
    session_idle_hours: int = _field("LOOKOUT_SESSION_IDLE_HOURS", 72)
    signup: str = _field("LOOKOUT_SIGNUP", "invite")
    signups_per_hour: int = _field("LOOKOUT_SIGNUPS_PER_HOUR", 10)
    invite_days: int = _field("LOOKOUT_INVITE_DAYS", 7)
    # Rendering pages in Debian's chromium (capabilities/browser.py), in workers only.
    browser: str = _field("LOOKOUT_BROWSER", "auto")
    browser_path: str = _field("LOOKOUT_BROWSER_PATH", "")
    browser_pages: int = _field("LOOKOUT_BROWSER_PAGES", 2)
    browser_timeout_s: float = _field("LOOKOUT_BROWSER_TIMEOUT_S", 30.0)
    browser_js_heap_mb: int = _field("LOOKOUT_BROWSER_JS_HEAP_MB", 256)
    # A renderer process past this resident memory is killed: its page answers a per-page error.
    browser_memory_mb: int = _field("LOOKOUT_BROWSER_MEMORY_MB", 1024)
    browser_screenshot_max_bytes: int = _field("LOOKOUT_BROWSER_SCREENSHOT_MAX_BYTES", 5_000_000)

    @property
    def public_origin(self) -> str:
        """scheme://host[:port] of LOOKOUT_PUBLIC_URL: the Origin our own pages send."""
        parts = urllib.parse.urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}".lower()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from `environ` (default os.environ); a missing required key is named."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        missing: list[str] = []
        for field in dataclasses.fields(cls):
            if field.name in overrides:
                continue
            name = field.metadata["env"]
            raw = env.get(name)
            if raw is None or (raw == "" and field.default is dataclasses.MISSING):
                if field.default is dataclasses.MISSING:
                    missing.append(name)
                continue
            try:
                values[field.name] = _cast(field, raw)
            except ValueError as exc:
                raise ConfigError(f"{name}: {exc}") from None
        if "public_url" not in values and "public_url" not in overrides:
            missing.append("LOOKOUT_PUBLIC_URL (`lookout dev` sets it to its own URL)")
        if missing:
            raise ConfigError(f"missing required setting(s): {', '.join(missing)}")
        if "cookie_secure" not in values and "cookie_secure" not in overrides:
            public = str(overrides.get("public_url", values.get("public_url", "")))
            values["cookie_secure"] = public.lower().startswith("https://")
        settings = cls(**values, **overrides)
        _check_accounts(settings)
        return settings

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        parts = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            shown = "'***'" if field.metadata["secret"] and value else repr(value)
            parts.append(f"{field.name}={shown}")
        return f"Settings({', '.join(parts)})"

    __str__ = __repr__


SIGNUP_POLICIES = ("open", "invite", "closed")
BROWSER_MODES = ("off", "auto")


def _check_accounts(settings: Settings) -> None:
    """The public URL, the sign-up policy and the session settings make sense, or ConfigError
    naming the setting. Secure cookies follow an https public URL unless set."""
    parts = urllib.parse.urlsplit(settings.public_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(
            f"LOOKOUT_PUBLIC_URL: expected the http(s) URL people open Lookout at, such as "
            f"https://lookout.example.com, got {settings.public_url!r}"
        )
    if settings.signup not in SIGNUP_POLICIES:
        raise ConfigError(
            f"LOOKOUT_SIGNUP: expected one of {', '.join(SIGNUP_POLICIES)}, got {settings.signup!r}"
        )
    positive = {
        "LOOKOUT_SESSION_DAYS": settings.session_days,
        "LOOKOUT_SESSION_IDLE_HOURS": settings.session_idle_hours,
        "LOOKOUT_SIGNUPS_PER_HOUR": settings.signups_per_hour,
        "LOOKOUT_INVITE_DAYS": settings.invite_days,
    }
    for name, value in positive.items():
        if value <= 0:
            raise ConfigError(f"{name}: expected a positive number, got {value}")
    if settings.browser not in BROWSER_MODES:
        raise ConfigError(
            f"LOOKOUT_BROWSER: expected one of {', '.join(BROWSER_MODES)}, got {settings.browser!r}"
        )
    if settings.default_credits < 0:
        raise ConfigError(
            f"LOOKOUT_DEFAULT_CREDITS: expected 0 or more, got {settings.default_credits}"
        )
    if not 0 <= settings.read_nice <= 19:
        raise ConfigError(f"LOOKOUT_READ_NICE: expected 0 to 19, got {settings.read_nice}")


def _cast(field: dataclasses.Field[Any], raw: str) -> Any:
    kind = field.type if isinstance(field.type, str) else field.type.__name__
    casts: dict[str, Callable[[str], Any]] = {
        "int": int,
        "float": float,
        "bool": _bool,
        "str": str,
        "tuple[str, ...]": _list,
    }
    return casts[kind](raw)
