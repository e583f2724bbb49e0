"""The token usage a fake model reports: fixed per turn, or estimated from the text.

A scripted turn may state its counts (`reply("x", prompt_tokens=10)`); the counts it leaves out
are filled in when it is played, either with the fixed 10 prompt and 5 completion tokens the fake
models have always reported, or, with `tokens="estimated"`, estimated from the request and the
reply as an endpoint would count them. The estimate is memory's token counter in its approximate
mode (a quarter of the characters, plus a few tokens a message): the same numbers whether or not
`toktok` is installed, so a test's token budget is hit at the same turn everywhere.
"""

from __future__ import annotations

import json
from typing import Literal

from agents.models._model import ModelRequest, ModelResponse, Usage
from memory import AssistantMessage, SystemMessage
from memory.compaction import count_tokens

__all__ = ["TokenCounting", "estimated_usage", "played", "usage"]

TokenCounting = Literal["fixed", "estimated"]
"""How a fake model fills in the token counts a turn does not state: 10 prompt and 5 completion
tokens ("fixed"), or an estimate from the request and the reply text ("estimated")."""

_FIXED = {"prompt_tokens": 10, "completion_tokens": 5}
# A name no tokenizer is known for: the approximate count, in every environment.
_COUNTING_AS = "paor-testing"


def usage(prompt_tokens: int | None, completion_tokens: int | None) -> Usage:
    """One request's usage with only the given counts set (the rest are filled in when played)."""
    given = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return Usage(requests=1, **{k: v for k, v in given.items() if v is not None})


def played(
    response: ModelResponse, request: ModelRequest, counting: TokenCounting
) -> ModelResponse:
    """`response` with the token counts it does not state filled in.

    A response built without any usage (`ModelResponse(message=...)`) states none: it reports
    zero tokens when counting is "fixed", as it always has, and an estimate otherwise.
    """
    if "usage" in response.model_fields_set:
        stated = response.usage.model_fields_set
    elif counting == "fixed":
        return response
    else:
        stated = set()
    missing = {"prompt_tokens", "completion_tokens"} - stated
    if not missing:
        return response
    fill = _FIXED if counting == "fixed" else _estimate(request, response.message)
    update = {name: fill[name] for name in missing}
    return response.model_copy(update={"usage": response.usage.model_copy(update=update)})


def estimated_usage(request: ModelRequest, message: AssistantMessage) -> Usage:
    """The usage a fake model with `tokens="estimated"` reports for answering `request` with
    `message` (for asserting on exact totals, or sizing a token budget in a test)."""
    return Usage(requests=1, tool_calls=0, **_estimate(request, message))


def _estimate(request: ModelRequest, message: AssistantMessage) -> dict[str, int]:
    return {
        "prompt_tokens": _prompt_tokens(request),
        "completion_tokens": _completion_tokens(message),
    }


def _prompt_tokens(request: ModelRequest) -> int:
    """The messages, and the tool menu and output schema sent with them (counted as system
    text: a server renders them into the prompt)."""
    sent = [json.dumps(t.model_dump(), sort_keys=True) for t in request.tools]
    if request.output is not None:
        sent.append(json.dumps(request.output.schema_, sort_keys=True))
    extra = [SystemMessage(content=text) for text in sent]
    return count_tokens([*request.messages, *extra], _COUNTING_AS)


def _completion_tokens(message: AssistantMessage) -> int:
    """The reply's text and tool calls, without the role and the priming a prompt pays for."""
    frame = count_tokens([AssistantMessage(content="")], _COUNTING_AS)
    return max(1, count_tokens([message], _COUNTING_AS) - frame)
