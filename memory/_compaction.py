"""History compaction: keep one agent's transcript under a token budget, in a few big steps.

```
  tokens ≤ max_tokens ──▶ unchanged (the prompt prefix stays byte-identical: prompt caching)
  tokens > max_tokens ──▶ Stage 1: mask old observations, oldest first, down to target × max_tokens
                            └─ still over ──▶ Stage 2: fold every older turn into one summary
```

Hysteresis keeps the prefix stable: nothing changes until the transcript passes `max_tokens`, and
then it shrinks well below it (to `target`), so the next many calls reuse the same cached prefix.

What is never touched: the system prompt, the task (the first user message) and the latest turn;
the latest `keep_turns` turns are kept whole as long as they fit the budget (when they alone are
over it, their observations are masked too, oldest first, all but the latest turn's). A turn is an assistant message, the tool messages answering its calls and any
loop feedback after them; turns move as a whole, so a tool call is never separated from its result
and the compacted transcript passes `Transcript.check()` whenever its input did.

Stage 2 summarises the older turns as they were before this call's masking, with the caller's
summariser (a model call the executor routes through its effect boundary), or, without one or when
it fails, extractively: each call's tool, arguments and first line of its result. Observations
masked by an earlier compaction stay masked: stage 2 sees their one-line digest only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from memory._logging import logger
from memory._tokens import REPLY_PRIMING, count_text, count_tokens, message_tokens, truncate_text
from memory._transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    Transcript,
    UserMessage,
)

__all__ = ["SUMMARY_PREFIX", "Compaction", "Compactor", "Summariser"]

SUMMARY_PREFIX = "Summary of earlier work:"
_RENDERED_RESULT_CHARS = 1500
_LINE_CHARS = 160
_ARGS_CHARS = 120
_MASKED = re.compile(r"\[observation of .* elided: [\d,]+ chars, digest [0-9a-f]{6}\]")
_SUMMARY_INSTRUCTIONS = (
    "You compress the working history of an agent so that it can go on with its task. Summarise "
    "the steps you are given: what was tried, what was found (keep figures, names, identifiers "
    "and sources exactly), what failed, and what is still open. Plain text, no preamble, at most "
    "{words} words."
)

Summariser = Callable[[tuple[Message, ...], int], Awaitable[str | None]]
"""Answers a summary prompt (the messages) within a token cap; None means it could not."""

_log = logger("paor.memory")


class Compaction(BaseModel):
    """What one call to `Compactor.compact` did.

    Attributes:
        messages: The compacted transcript (the input itself when nothing had to change).
        tokens_before: Prompt tokens of the input.
        tokens_after: Prompt tokens of the result.
        max_tokens: The compactor's budget.
        masked: Observations masked to a one-line digest.
        summarised: Messages folded into the summary (stage 2), or 0.
        summary: How the summary was written, if there is a new one.
    """

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    tokens_before: int
    tokens_after: int
    max_tokens: int
    masked: int = 0
    summarised: int = 0
    summary: Literal["model", "extractive"] | None = None

    @property
    def changed(self) -> bool:
        """Whether the transcript was rewritten."""
        return bool(self.masked or self.summarised)

    @property
    def within_budget(self) -> bool:
        """Whether the result fits the budget (it may not: the protected part alone is too big)."""
        return self.tokens_after <= self.max_tokens


class Compactor:
    """Compacts a transcript under a token budget before a model call.

    Args:
        max_tokens: The budget for the transcript's tokens (the tool menu and the reply come on
            top of it). Compaction starts when the transcript passes it.
        target: The fraction of `max_tokens` a compaction shrinks the transcript to.
        keep_turns: The latest turns never summarised, and never masked unless they alone are
            over the budget (the latest turn is never masked).
        summary_tokens: A cap on the summary's length (default: an eighth of `max_tokens`).
        summarise_with_model: Use the caller's summariser for stage 2 when one is given; if
            False, stage 2 is always extractive (no model call).

    Raises:
        ValueError: If a setting is out of range.
    """

    def __init__(
        self,
        max_tokens: int,
        *,
        target: float = 0.6,
        keep_turns: int = 3,
        summary_tokens: int | None = None,
        summarise_with_model: bool = True,
    ) -> None:
        if max_tokens < 1 or not 0.0 < target < 1.0 or keep_turns < 1:
            raise ValueError("need max_tokens >= 1, 0 < target < 1 and keep_turns >= 1")
        self.max_tokens = max_tokens
        self.target = target
        self.keep_turns = keep_turns
        self.summary_tokens = summary_tokens or max(32, max_tokens // 8)
        self.summarise_with_model = summarise_with_model

    async def compact(
        self,
        messages: Transcript | Iterable[Message],
        *,
        model: str = "",
        summariser: Summariser | None = None,
    ) -> Compaction:
        """Return `messages` compacted under the budget, or unchanged if they fit.

        Args:
            messages: The transcript (valid: every call answered).
            model: The model name, which picks the tokenizer (approximate if unknown).
            summariser: Writes the stage-2 summary; without one it is extractive.
        """
        msgs = tuple(messages.messages if isinstance(messages, Transcript) else messages)
        costs = message_tokens(msgs, model)
        before = sum(costs) + REPLY_PRIMING
        if before <= self.max_tokens:
            return Compaction(
                messages=msgs, tokens_before=before, tokens_after=before, max_tokens=self.max_tokens
            )
        goal = int(self.max_tokens * self.target)
        head, split = _layout(msgs, self.keep_turns)
        masked, after, count = _mask(msgs, costs, range(head, split), before - goal, model)
        result = Compaction(
            messages=masked,
            tokens_before=before,
            tokens_after=after,
            max_tokens=self.max_tokens,
            masked=count,
        )
        if after > goal and self._can_summarise(msgs, costs, head, split):
            result = await self._summarise(msgs, head, split, before, model, summariser)
        if result.tokens_after > self.max_tokens and self.keep_turns > 1:
            result = self._squeeze(result, goal, model)
        self._trace(result)
        return result

    def _squeeze(self, result: Compaction, goal: int, model: str) -> Compaction:
        """The latest turns alone are over the budget: mask their observations too, oldest first,
        all but the latest turn's (the budget is the line; `keep_turns` is how much is kept whole
        while it allows)."""
        msgs = result.messages
        costs = message_tokens(msgs, model)
        head, split = _layout(msgs, 1)
        excess = sum(costs) + REPLY_PRIMING - goal
        masked, after, count = _mask(msgs, costs, range(head, split), excess, model)
        update = {"messages": masked, "tokens_after": after, "masked": result.masked + count}
        return result.model_copy(update=update)

    def _can_summarise(
        self, msgs: tuple[Message, ...], costs: list[int], head: int, split: int
    ) -> bool:
        """Whether stage 2 has turns to fold and can bring the transcript under the budget.

        When the protected part alone is too big, a summary cannot help, and trying would cost a
        summary call on every model call.
        """
        protected = sum(costs[:head]) + sum(costs[split:]) + REPLY_PRIMING
        has_turns = any(isinstance(m, AssistantMessage) for m in msgs[head:split])
        return has_turns and protected + self.summary_tokens <= self.max_tokens

    async def _summarise(
        self,
        msgs: tuple[Message, ...],
        head: int,
        split: int,
        before: int,
        model: str,
        summariser: Summariser | None,
    ) -> Compaction:
        older = msgs[head:split]
        text: str | None = None
        how: Literal["model", "extractive"] = "model"
        if summariser is not None and self.summarise_with_model:
            prompt = self._prompt(msgs[:head], older, model)
            text = _clean(await summariser(prompt, self.summary_tokens))
        if text:
            text = truncate_text(text, self.summary_tokens, model)
        else:
            text, how = _latest_lines(_extract(older), self.summary_tokens, model), "extractive"
        summary = UserMessage(content=f"{SUMMARY_PREFIX}\n{text}")
        kept = (*msgs[:head], summary, *msgs[split:])
        return Compaction(
            messages=kept,
            tokens_before=before,
            tokens_after=count_tokens(kept, model),
            max_tokens=self.max_tokens,
            summarised=len(older),
            summary=how,
        )

    def _prompt(
        self, head: Sequence[Message], older: Sequence[Message], model: str
    ) -> tuple[Message, ...]:
        task = next((m.content for m in reversed(head) if isinstance(m, UserMessage)), "")
        steps = truncate_text(_render(older, self.max_tokens), self.max_tokens, model)
        words = max(20, self.summary_tokens * 3 // 4)
        return (
            SystemMessage(content=_SUMMARY_INSTRUCTIONS.format(words=words)),
            UserMessage(content=f"The agent's task:\n{task}\n\nThe steps to summarise:\n{steps}"),
        )

    def _trace(self, result: Compaction) -> None:
        _log.info(
            "history_compacted",
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            masked=result.masked,
            summarised=result.summarised,
            summary=result.summary,
        )
        if not result.within_budget:
            _log.warning(
                "history_over_budget", tokens=result.tokens_after, max_tokens=self.max_tokens
            )


def _layout(msgs: Sequence[Message], keep_turns: int) -> tuple[int, int]:
    """(end of the head, start of the kept latest turns): msgs[head:split] may be compacted."""
    head = next((i + 1 for i, m in enumerate(msgs) if isinstance(m, UserMessage)), None)
    if head is None:
        head = next((i for i, m in enumerate(msgs) if not isinstance(m, SystemMessage)), len(msgs))
    starts = [i for i in range(head, len(msgs)) if isinstance(msgs[i], AssistantMessage)]
    split = starts[-keep_turns] if len(starts) > keep_turns else head
    return head, split


def _mask(
    msgs: tuple[Message, ...], costs: list[int], span: range, excess: int, model: str
) -> tuple[tuple[Message, ...], int, int]:
    """Mask observations in `span`, oldest first, until `excess` tokens are saved."""
    out = list(msgs)
    saved = count = 0
    for i in span:
        message = msgs[i]
        if saved >= excess:
            break
        if not isinstance(message, ToolMessage):
            continue
        line = _mask_line(message)
        if len(line) >= len(message.content) or _MASKED.fullmatch(message.content):
            continue
        out[i] = message.model_copy(update={"content": line})
        saved += costs[i] - message_tokens([out[i]], model)[0]
        count += 1
    return tuple(out), sum(costs) + REPLY_PRIMING - saved, count


def _mask_line(message: ToolMessage) -> str:
    """The one-line digest that stands in for a masked observation."""
    digest = hashlib.blake2b(message.content.encode("utf-8", "replace"), digest_size=3).hexdigest()
    return (
        f"[observation of {message.name} elided: {len(message.content):,} chars, digest {digest}]"
    )


def _render(older: Sequence[Message], max_tokens: int) -> str:
    """The older turns as plain text for the summariser, results cut to share `max_tokens`."""
    results = sum(isinstance(m, ToolMessage) for m in older)
    # About four characters a token; results get most of the room, the calls the rest.
    share = min(_RENDERED_RESULT_CHARS, max(_LINE_CHARS, max_tokens * 3 // max(1, results)))
    lines = []
    for m in older:
        if isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"[assistant] {m.content}")
            lines += [f"[call] {c.name}({c.arguments})" for c in m.tool_calls]
        elif isinstance(m, ToolMessage):
            status = "" if m.ok else " (failed)"
            lines.append(f"[result of {m.name}{status}] {_cut(m.content, share)}")
        elif isinstance(m, UserMessage):
            lines.append(f"[note] {m.content}")
    return "\n".join(lines)


def _extract(older: Sequence[Message]) -> list[str]:
    """An extractive summary: each call's tool, arguments and first line of its result."""
    results = {m.tool_call_id: m for m in older if isinstance(m, ToolMessage)}
    lines: list[str] = []
    for m in older:
        if isinstance(m, AssistantMessage):
            if m.content and m.content.strip() and not m.tool_calls:
                lines.append(f"- said: {_first_line(m.content)}")
            for call in m.tool_calls:
                result = results.get(call.id)
                outcome = "(no result)" if result is None else _first_line(result.content)
                failed = "failed: " if result is not None and not result.ok else ""
                lines.append(
                    f"- {call.name}({_cut(call.arguments, _ARGS_CHARS)}) → {failed}{outcome}"
                )
        elif isinstance(m, UserMessage) and m.content.startswith(SUMMARY_PREFIX):
            lines += m.content.removeprefix(SUMMARY_PREFIX).strip().splitlines()
        elif isinstance(m, UserMessage):
            lines.append(f"- note: {_first_line(m.content)}")
    return lines


def _latest_lines(lines: list[str], cap: int, model: str) -> str:
    """The latest lines that fit `cap` tokens, with a count of the older ones left out."""
    costs = count_text(lines, model)
    total, keep = 8, len(lines)
    while keep and total + costs[keep - 1] + 1 <= cap:
        total += costs[keep - 1] + 1
        keep -= 1
    dropped = [f"- ({keep} earlier entries left out)"] if keep else []
    return "\n".join(dropped + lines[keep:])


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    return text.strip().removeprefix(SUMMARY_PREFIX).strip() or None


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return _cut(line, _LINE_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
