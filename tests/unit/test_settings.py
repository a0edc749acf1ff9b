from __future__ import annotations

import pytest

from lookout.errors import ConfigError
from lookout.settings import Settings

REQUIRED = {
    "DATABASE_URL": "postgresql://lookout:pg-password@db/lookout",
    "REDIS_URL": "redis://:redis-password@cache:6379/0",
    "LOOKOUT_SECRET_KEY": "very-secret-key",
    "LOOKOUT_PUBLIC_URL": "https://lookout.example.com",
}


def test_values_are_cast_to_their_types() -> None:
    settings = Settings.from_env(
        {
            **REQUIRED,
            "PORT": "8123",
            "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "true",
            "LOOKOUT_JOB_WAIT_S": "2.5",
            "LOOKOUT_ALLOWED_ORIGINS": "https://a.example, https://b.example",
        }
    )
    assert settings.port == 8123
    assert settings.allow_private_networks is True
    assert settings.job_wait_s == 2.5
    assert settings.allowed_origins == ("https://a.example", "https://b.example")


def test_defaults_are_safe() -> None:
    settings = Settings.from_env(REQUIRED)
    assert settings.allow_private_networks is False
    assert settings.port == 8000
    assert settings.min_watch_minutes == 5


def test_missing_required_settings_are_named() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"REDIS_URL": "redis://x"})
    assert "DATABASE_URL" in str(caught.value)
    assert "LOOKOUT_SECRET_KEY" in str(caught.value)
    assert "REDIS_URL" not in str(caught.value)


def test_malformed_value_names_the_setting() -> None:
    with pytest.raises(ConfigError, match="PORT"):
        Settings.from_env({**REQUIRED, "PORT": "eighty"})
    with pytest.raises(ConfigError, match="LOOKOUT_ALLOW_PRIVATE_NETWORKS"):
        Settings.from_env({**REQUIRED, "LOOKOUT_ALLOW_PRIVATE_NETWORKS": "maybe"})


def test_secrets_are_masked_in_repr() -> None:
    settings = Settings.from_env({**REQUIRED, "LOOKOUT_LLM_API_KEY": "sk-live-123"})
    shown = repr(settings) + str(settings)
    for secret in ("pg-password", "redis-password", "very-secret-key", "sk-live-123"):
        assert secret not in shown
    assert "port=8000" in shown


def test_settings_are_frozen() -> None:
    settings = Settings.from_env(REQUIRED)
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]
