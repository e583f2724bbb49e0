"""`agents._tracing`: redaction of secrets in tool arguments, free text and URLs."""

from __future__ import annotations

import pytest

from agents._tracing import REDACTED, redact, redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://ann:hunter2@10.0.0.5:8080/v1", "http://ann:***@10.0.0.5:8080/v1"),
        ("https://ghp_abcdef123456@models.example/v1", "https://***@models.example/v1"),
        (
            "http://host/v1?key=AIzaX1&api_key=s3cr3t&model=m&access_token=t0k",
            "http://host/v1?key=***&api_key=***&model=m&access_token=***",
        ),
        (
            "https://b.example/o?X-Amz-Signature=ab12&X-Amz-Credential=AK%2F1&x=1#token=zz",
            "https://b.example/o?X-Amz-Signature=***&X-Amz-Credential=***&x=1#token=***",
        ),
        ("http://127.0.0.1:54321/v1/", "http://127.0.0.1:54321/v1/"),
        ("http://[::1]:8000/v1?debug", "http://[::1]:8000/v1?debug"),
        ("http://host/v1/sk-abcdefghijklmnop/x", "http://host/v1/***/x"),
    ],
)
def test_redact_url_masks_credentials_and_keeps_the_server(url: str, shown: str) -> None:
    """Passwords, lone userinfo and secret query values are masked; scheme, host, port, path stay."""
    assert redact_url(url) == shown


def test_redact_url_of_an_unparseable_url_still_masks_its_secrets() -> None:
    """A URL that urlsplit refuses is redacted as text instead of raising."""
    shown = redact_url("http://ann:hunter2@[::1/v1")
    assert "hunter2" not in shown
    assert shown.startswith("http://ann:")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("login failed: password=hunter2 for ann", "login failed: password=*** for ann"),
        ("passwd: hunter2", "passwd: ***"),
        ("SECRET=abc123; next", "SECRET=***; next"),
        ("token=t0k&user=ann", "token=***&user=ann"),
        ("api_key=k3y other", "api_key=*** other"),
        ("X-Api-Key: k3y", "X-Api-Key: ***"),
        ('{"client_secret": "two words", "n": 1}', '{"client_secret": "***", "n": 1}'),
        ("{'db_password': 'p w'}", "{'db_password': '***'}"),
        (
            "cannot reach http://ann:hunter2@host:8080/v1",
            "cannot reach http://ann:***@host:8080/v1",
        ),
        ("see https://tok3n@host/v1 now", "see https://***@host/v1 now"),
        ("Authorization: Bearer abcdefghijkl", "Authorization: ***"),
        ("key sk-abcdefghijklmnop leaked", "key *** leaked"),
    ],
)
def test_redact_text_masks_secret_assignments_and_url_userinfo(text: str, shown: str) -> None:
    """`name=value` and `name: value` secrets, quoted or not, and URL userinfo are masked."""
    assert redact_text(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=64 exceeds the limit",
        "prompt_tokens: 1200, completion_tokens: 40",
        "see http://host:8080/v1/models?x=1 and mail ann@example.com",
        "status=500 reason: overloaded",
    ],
)
def test_redact_text_leaves_ordinary_text_alone(text: str) -> None:
    """Token counts, plain URLs, e-mail addresses and other key=value pairs are kept."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "a-" * 200_000,
        'password="' * 100_000,
        "http://" * 100_000,
        "a://x:" * 100_000,
        "token" + " " * 400_000 + "x",
    ],
)
def test_redact_text_stays_linear_on_hostile_input(text: str) -> None:
    """Inputs built to make a regex backtrack are redacted within the test's timeout."""
    assert len(redact_text(text)) > 0


def test_redact_masks_secret_keys_and_values_in_tool_arguments() -> None:
    """Arguments named like secrets, listed as sensitive, or holding a key are masked."""
    args = {"user": "ann", "api_key": "x", "pin": "1234", "note": "sk-abcdefghijklmnop"}
    assert redact(args, sensitive=["pin"]) == {
        "user": "ann",
        "api_key": REDACTED,
        "pin": REDACTED,
        "note": REDACTED,
    }
