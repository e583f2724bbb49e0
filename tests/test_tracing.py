"""`agents._tracing`: the logger (stdlib or the application's structlog), and redaction of
secrets in tool arguments, free text and URLs."""

from __future__ import annotations

import logging

import pytest
import structlog
from structlog.testing import capture_logs

from agents._tracing import REDACTED, logger, redact, redact_text, redact_url


@pytest.fixture
def unconfigured() -> None:
    """structlog as an application that never configured it leaves it."""
    structlog.reset_defaults()


class Loud:
    """A value that counts how often it is formatted."""

    shown = 0

    def __repr__(self) -> str:
        Loud.shown += 1
        return "loud"


@pytest.mark.usefixtures("unconfigured")
def test_without_structlog_configured_events_are_stdlib_records(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An event is a record of its `paor.*` logger: level kept, fields in the line and `extra`."""
    with caplog.at_level(logging.INFO, logger="paor"):
        with structlog.contextvars.bound_contextvars(run_id="r1"):
            logger("paor.agent").info("tool_called", tool="search", note="two words", n=2)
        logger("paor.run").warning("budget_low", left=10)
    first, second = caplog.records
    assert (first.name, first.levelno, second.levelno) == ("paor.agent", logging.INFO, 30)
    assert first.getMessage() == "tool_called run_id=r1 tool=search note='two words' n=2"
    assert first.__dict__["event"] == "tool_called"
    assert first.__dict__["fields"] == {
        "run_id": "r1",
        "tool": "search",
        "note": "two words",
        "n": 2,
    }
    assert first.funcName == "test_without_structlog_configured_events_are_stdlib_records"


@pytest.mark.usefixtures("unconfigured")
def test_a_disabled_level_formats_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """Below the `paor` logger's level an event costs a level check: no field is formatted."""
    Loud.shown = 0
    with caplog.at_level(logging.WARNING, logger="paor"):
        logger("paor.agent").info("model_called", value=Loud())
        logger("paor.agent").warning("tool_failed", value=Loud())
    assert Loud.shown == 1
    assert [r.getMessage() for r in caplog.records] == ["tool_failed value=loud"]


@pytest.mark.usefixtures("unconfigured")
def test_exception_keeps_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """`exception()` is an ERROR record carrying the exception being handled."""
    try:
        raise ValueError("boom")
    except ValueError:
        logger("paor.run").exception("subtask_crashed", subtask_id="s1")
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[0] is ValueError
    assert record.getMessage() == "subtask_crashed subtask_id=s1"


def test_the_paor_logger_has_a_null_handler() -> None:
    """With no logging configured, warnings do not reach the last-resort handler."""
    handlers = logging.getLogger("paor").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


@pytest.mark.usefixtures("unconfigured")
def test_structlog_configured_after_the_logger_was_made_gets_the_events(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The choice is made per call: configuring structlog later routes events to it alone."""
    log = logger("paor.agent")
    with capture_logs() as logs:
        log.info("tool_called", tool="search")
        log.exception("tool_crashed")
    assert logs == [
        {"event": "tool_called", "tool": "search", "log_level": "info"},
        {"event": "tool_crashed", "exc_info": True, "log_level": "error"},
    ]
    assert caplog.records == []


URLS = [
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
]


@pytest.mark.parametrize(("url", "shown"), URLS)
def test_redact_url_masks_credentials_and_keeps_the_server(url: str, shown: str) -> None:
    """Passwords, lone userinfo and secret query values are masked; scheme, host, port, path stay."""
    assert redact_url(url) == shown


@pytest.mark.parametrize(("url", "shown"), URLS)
def test_redact_text_masks_the_urls_it_holds_as_redact_url_does(url: str, shown: str) -> None:
    """A URL inside free text (a log line, an error) loses the same secrets; the sentence around
    it, its closing punctuation included, is kept."""
    assert redact_text(f"fetching {url} now") == f"fetching {shown} now"
    assert redact_text(f"see {url}.") == f"see {shown}."


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
        "token=" + "." * 400_000,
        "token=." * 100_000,
        "http://h/?" + ")" * 400_000,
        "a://" * 100_000 + "." * 100_000,
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
