"""Tracing helpers: the library's logger, result digests and redaction.

The logger is `memory._logging`'s (quiet unless the application configures logging; re-exported
here for the packages above memory).

Redaction replaces secrets with `REDACTED`: tool arguments (`redact`), free text (`redact_text`:
API keys, bearer tokens, `password=...`-style assignments, and in the URLs it holds, userinfo and
secret query values) and URLs (`redact_url`, which also keeps one that does not parse readable).
Every pattern is linear in its input: possessive quantifiers, and each match begins at a token's
start, so a hostile string cannot make a regex backtrack.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from memory._logging import Logger, logger

__all__ = ["REDACTED", "Logger", "digest", "logger", "redact", "redact_text", "redact_url"]


REDACTED = "***"
_SECRET_KEYS = re.compile(r"(api[_-]?key|secret|password|passwd|token|authorization)", re.I)
_SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")
# `name=value`, `name: value`, `"name": "value"` where the name's last part says secret
# (`password`, `db_password`, `X-Api-Key`, `access_token`; not `max_tokens`, nor a bare `key`).
# A quoted value runs to its quote (at most 512 characters), a bare one to the next space, quote
# or separator, a sentence's closing punctuation left out. The name's prefix backtracks only over
# its own `_` and `-`, a bare value only over its closing punctuation: linear.
_ASSIGNMENT = re.compile(
    r"(?<![\w-])((?:[\w-]*[_-])?(?:api[_-]?key|apikey|secret|password|passwd|pwd|token|auth"
    r"|authorization|credentials?))(?![\w-])"
    r"([\"']?[ \t]*+[=:][ \t]*+)([\"'])?((?(3)[^\"'\r\n]{1,512}+|[^\s\"'&,;]*[^\s\"'&,;.:!?)]))",
    re.I,
)
# URL query names that carry secrets on top of `_SECRET_KEYS`: Google's `key`, signed URLs.
_SECRET_PARAM = re.compile(r"(?:x-(?:amz|goog)-)?(?:key|sig|signature|credential)", re.I)
_USERINFO = re.compile(r"(?<![\w+.-])([a-z][a-z0-9+.-]*+://)([^\s/?#@]++)@", re.I)
# A URL in free text, up to a space or a quote, its last character not a sentence's punctuation.
_URL = re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]*+://[^\s\"'<>]*[^\s\"'<>.,;:!?)\]]", re.I)


def digest(text: str) -> str:
    """A short stable digest of a result, for traces and loop detection."""
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=6).hexdigest()


def redact(args: Mapping[str, Any], sensitive: Collection[str] = ()) -> dict[str, Any]:
    """A copy of tool arguments with sensitive and secret-looking values masked."""
    return {
        k: REDACTED if k in sensitive or _SECRET_KEYS.search(k) else _redact_value(v)
        for k, v in args.items()
    }


def redact_text(text: str) -> str:
    """Mask secrets inside free text.

    API keys (`sk-...`) and bearer tokens; the value of a secret-named assignment
    (`password=...`, `passwd: ...`, `"api_key": "..."`, `token=...`); and in a URL, the password
    of its userinfo (all of a userinfo without one, often a token) and the values of its
    secret-looking query and fragment parameters (`key`, `sig`, `X-Amz-Signature`...), as
    `redact_url` masks them.
    """
    text = _SECRET_VALUES.sub(REDACTED, text)
    text = _ASSIGNMENT.sub(_mask_assignment, text)
    text = _USERINFO.sub(_mask_userinfo, text)
    return _URL.sub(_mask_url_params, text)


def redact_url(url: str) -> str:
    """`url` with its credentials masked, its scheme, host, port and path kept.

    The userinfo's password (all of a userinfo without one), the values of secret-looking query
    and fragment parameters (`key`, `api_key`, `token`, `sig`...), and any key in the path are
    replaced by `REDACTED`: what is left still names the server.

    ```python
    >>> redact_url("http://ann:hunter2@10.0.0.5:8080/v1?api_key=k&model=m")
    'http://ann:***@10.0.0.5:8080/v1?api_key=***&model=m'
    ```
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = f"{_masked_userinfo(userinfo)}@{hostport}" if at else hostport
    query, fragment = _masked_params(parts.query), _masked_params(parts.fragment)
    path = _SECRET_VALUES.sub(REDACTED, parts.path)
    return urlunsplit((parts.scheme, netloc, path, query, fragment))


def _mask_assignment(match: re.Match[str]) -> str:
    name, separator, quote, _ = match.groups()
    return f"{name}{separator}{quote or ''}{REDACTED}"


def _mask_url_params(match: re.Match[str]) -> str:
    """A URL found in text with its secret query and fragment values masked (the rest of it
    byte for byte: the text around it is not a URL's business)."""
    url, hash_, fragment = match.group(0).partition("#")
    base, question, query = url.partition("?")
    query = _masked_params(query) if question else ""
    fragment = _masked_params(fragment) if hash_ else ""
    return f"{base}{question}{query}{hash_}{fragment}"


def _mask_userinfo(match: re.Match[str]) -> str:
    return f"{match.group(1)}{_masked_userinfo(match.group(2))}@"


def _masked_userinfo(userinfo: str) -> str:
    user, colon, _ = userinfo.partition(":")
    return f"{user}:{REDACTED}" if colon else REDACTED


def _masked_params(params: str) -> str:
    """`a=1&key=2` with secret-named values masked; anything else is kept byte for byte."""
    masked = []
    for pair in params.split("&"):
        name, equals, _ = pair.partition("=")
        plain = unquote(name)
        secret = equals and (_SECRET_KEYS.search(plain) or _SECRET_PARAM.fullmatch(plain))
        masked.append(f"{name}={REDACTED}" if secret else pair)
    return "&".join(masked)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return redact(value)
    return value
