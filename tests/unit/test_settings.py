from __future__ import annotations

import pytest

from lookout import dev
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


def test_the_public_url_is_required_and_named_when_missing() -> None:
    without = {name: value for name, value in REQUIRED.items() if name != "LOOKOUT_PUBLIC_URL"}

    with pytest.raises(ConfigError, match="LOOKOUT_PUBLIC_URL") as caught:
        Settings.from_env(without)

    assert "DATABASE_URL" not in str(caught.value)


@pytest.mark.parametrize(
    "url", ["", "lookout.example.com", "ftp://lookout.example.com", "https://", "https://x.io/?a=1"]
)
def test_a_public_url_that_is_not_an_http_url_is_refused_by_name(url: str) -> None:
    with pytest.raises(ConfigError, match="LOOKOUT_PUBLIC_URL"):
        Settings.from_env({**REQUIRED, "LOOKOUT_PUBLIC_URL": url})


def test_the_public_origin_is_scheme_and_host_of_the_public_url() -> None:
    settings = Settings.from_env(
        {**REQUIRED, "LOOKOUT_PUBLIC_URL": "https://Lookout.Example:8443/app/"}
    )

    assert settings.public_origin == "https://lookout.example:8443"


def test_cookies_are_secure_by_default_behind_an_https_public_url() -> None:
    https = Settings.from_env(REQUIRED)
    http = Settings.from_env({**REQUIRED, "LOOKOUT_PUBLIC_URL": "http://127.0.0.1:8000"})
    told = Settings.from_env({**REQUIRED, "LOOKOUT_COOKIE_SECURE": "0"})

    assert https.cookie_secure is True
    assert http.cookie_secure is False
    assert told.cookie_secure is False  # an explicit setting wins


def test_sign_up_is_by_invitation_unless_set_and_the_policy_is_checked() -> None:
    assert Settings.from_env(REQUIRED).signup == "invite"
    assert Settings.from_env({**REQUIRED, "LOOKOUT_SIGNUP": "closed"}).signup == "closed"
    with pytest.raises(ConfigError, match="LOOKOUT_SIGNUP"):
        Settings.from_env({**REQUIRED, "LOOKOUT_SIGNUP": "everyone"})


def test_starting_credits_may_be_zero_but_not_negative() -> None:
    assert Settings.from_env({**REQUIRED, "LOOKOUT_DEFAULT_CREDITS": "0"}).default_credits == 0
    with pytest.raises(ConfigError, match="LOOKOUT_DEFAULT_CREDITS"):
        Settings.from_env({**REQUIRED, "LOOKOUT_DEFAULT_CREDITS": "-5"})


@pytest.mark.parametrize("value", ["-1", "20"])
def test_the_readers_niceness_is_0_to_19(value: str) -> None:
    assert Settings.from_env({**REQUIRED, "LOOKOUT_READ_NICE": "0"}).read_nice == 0
    with pytest.raises(ConfigError, match="LOOKOUT_READ_NICE"):
        Settings.from_env({**REQUIRED, "LOOKOUT_READ_NICE": value})


@pytest.mark.parametrize(
    "name", ["LOOKOUT_SESSION_IDLE_HOURS", "LOOKOUT_SIGNUPS_PER_HOUR", "LOOKOUT_INVITE_DAYS"]
)
def test_session_and_sign_up_limits_must_be_positive(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({**REQUIRED, name: "0"})


def test_lookout_dev_serves_at_its_loopback_url_with_open_sign_up() -> None:
    defaults = dev.dev_defaults("8123", {})
    settings = Settings.from_env({**REQUIRED, **defaults})

    assert settings.public_url == "http://127.0.0.1:8123"
    assert settings.signup == "open" and settings.cookie_secure is False
    chosen = {"LOOKOUT_PUBLIC_URL": "https://mine.example", "LOOKOUT_SIGNUP": "closed"}
    assert dev.dev_defaults("8123", chosen) == chosen
