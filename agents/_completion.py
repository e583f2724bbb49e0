"""The fields of a chat completion that paor reads (anything else is ignored), and its usage."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, ValidationError

from agents._errors import MalformedResponse
from agents._model import Usage

__all__ = ["Completion", "TokenUsage", "completion_of", "usage_of"]


class _Wire(BaseModel):
    """The fields of a chat completion that paor reads; anything else is ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Function(_Wire):
    name: str
    arguments: str | None = None


class Call(_Wire):
    id: str | None = None
    function: Function


class Message(_Wire):
    content: str | None = None
    tool_calls: list[Call] | None = None


class Choice(_Wire):
    message: Message
    finish_reason: str | None = None


class PromptDetails(_Wire):
    cached_tokens: int | None = None


class TokenUsage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptDetails | None = None


class Completion(_Wire):
    id: str | None = None
    choices: list[Choice]
    usage: TokenUsage | None = None
    model: str | None = None


def completion_of(data: object) -> Completion:
    """The completion in a response body (decoded JSON; a body sent as another type comes as text)."""
    if isinstance(data, dict) and data.get("choices"):
        try:
            return Completion.model_validate(data)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            raise MalformedResponse(
                f"the completion is malformed at {where}", raw=_excerpt(data)
            ) from None
    raise MalformedResponse("the server returned no choices", raw=_excerpt(data))


def _excerpt(data: object) -> str:
    return (data if isinstance(data, str) else json.dumps(data))[:2000]


def usage_of(usage: TokenUsage | None) -> Usage:
    if usage is None:
        return Usage(requests=1)
    details = usage.prompt_tokens_details
    return Usage(
        requests=1,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
    )
