from __future__ import annotations

import pytest

from lookout import logs
from lookout.access import oauth_models as models


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://localhost:8080/cb",
        "http://[::1]:9/cb",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
    ],
)
def test_redirect_uris_an_app_can_receive_on(uri: str) -> None:
    assert models.redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "http://attacker.example/cb",  # plain http off loopback
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "https://ok.example/cb#fragment",
        "https:///no-host",
        "x" * 3000,
        42,
    ],
)
def test_redirect_uris_refused(uri: object) -> None:
    assert models.redirect_uri_problem(uri) is not None


def test_a_loopback_redirect_may_change_its_port_and_nothing_else() -> None:
    assert models.same_redirect("http://127.0.0.1:1/cb", "http://127.0.0.1:5555/cb")
    assert not models.same_redirect("http://127.0.0.1:1/cb", "http://127.0.0.1:5555/other")
    assert not models.same_redirect("https://a.example/cb", "https://a.example:444/cb")
    assert not models.same_redirect("http://127.0.0.1/cb", "http://localhost/cb")


def test_scopes_unknown_are_ignored_and_the_registered_ones_are_a_ceiling() -> None:
    assert models.allowed_scope(None, None) == "verbs:read jobs:read"
    assert models.allowed_scope("openid jobs:read", None) == "jobs:read"
    assert models.allowed_scope("openid", None) == "verbs:read jobs:read"
    assert models.allowed_scope("verbs:read jobs:read", "jobs:read") == "jobs:read"


def test_tokens_never_look_like_api_keys_and_are_redacted_in_logs() -> None:
    access, refresh = models.new_access_token(), models.new_refresh_token()
    assert models.looks_like_access_token(access)
    assert not access.startswith("lk_") and not refresh.startswith("lk_")
    line = logs.redact(f"Issue token {{'access_token': '{access}', 'refresh_token': '{refresh}'}}")
    assert access not in line and refresh not in line
    assert "lko_***" in line and "lkr_***" in line
