"""The transcript's one invariant: every tool call gets exactly one result, placed after it."""

from __future__ import annotations

import pytest

from memory import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Transcript,
    UserMessage,
)
from memory.compaction import TranscriptError

pytestmark = pytest.mark.anyio


def _calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(tool_calls=tuple(ToolCall(id=i, name="search") for i in ids))


def _result(call_id: str) -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, name="search", content="found")


def _opening() -> list[Message]:
    return [SystemMessage(content="be brief"), UserMessage(content="Task: x")]


def test_answered_calls_pass() -> None:
    """A transcript whose every call is answered right after it passes the check."""
    transcript = Transcript(_opening())
    transcript.extend([_calls("a", "b"), _result("b"), _result("a")])
    transcript.append(AssistantMessage(content="done"))
    transcript.check()
    assert transcript.unanswered_calls() == []
    assert len(transcript) == 6


def test_unanswered_call_at_the_end_fails() -> None:
    """A call still waiting for its result at the end is reported by id."""
    transcript = Transcript([*_opening(), _calls("a", "b"), _result("a")])
    with pytest.raises(TranscriptError, match=r"\['b'\] unanswered at the end"):
        transcript.check()
    assert [c.id for c in transcript.unanswered_calls()] == ["b"]


def test_unanswered_call_before_next_assistant_message_fails() -> None:
    """The model may not speak again while a call of its previous turn is unanswered."""
    transcript = Transcript([*_opening(), _calls("a"), _calls("b"), _result("a"), _result("b")])
    with pytest.raises(TranscriptError, match=r"message 3: calls \['a'\] unanswered"):
        transcript.check()


def test_duplicate_id_in_one_message_fails() -> None:
    """Two calls of one turn may not share an id."""
    transcript = Transcript([*_opening(), _calls("a", "a"), _result("a"), _result("a")])
    with pytest.raises(TranscriptError, match="duplicate tool call id"):
        transcript.check()


def test_duplicate_id_across_turns_fails() -> None:
    """An id used in an earlier turn may not be reused later."""
    transcript = Transcript([*_opening(), _calls("a"), _result("a"), _calls("a"), _result("a")])
    with pytest.raises(TranscriptError, match="message 4: duplicate tool call id"):
        transcript.check()


def test_result_for_unknown_call_fails() -> None:
    """A result answering an id that was never called is rejected."""
    transcript = Transcript([*_opening(), _calls("a"), _result("a"), _result("zzz")])
    with pytest.raises(TranscriptError, match="unknown or answered call 'zzz'"):
        transcript.check()


def test_second_result_for_one_call_fails() -> None:
    """A call answered twice is rejected at the second answer."""
    transcript = Transcript([*_opening(), _calls("a"), _result("a"), _result("a")])
    with pytest.raises(TranscriptError, match="message 4: result for unknown or answered call 'a'"):
        transcript.check()


def test_result_before_its_call_fails() -> None:
    """A result placed before the message that makes the call answers an unknown call."""
    transcript = Transcript([*_opening(), _result("a"), _calls("a")])
    with pytest.raises(TranscriptError, match="message 2: result for unknown"):
        transcript.check()


def test_result_after_a_later_message_fails() -> None:
    """A user message may not come between a call and its result."""
    transcript = Transcript([*_opening(), _calls("a"), UserMessage(content="hurry"), _result("a")])
    with pytest.raises(TranscriptError, match=r"message 3: calls \['a'\] unanswered"):
        transcript.check()


def test_messages_is_a_snapshot() -> None:
    """Appending after taking `messages` does not change the snapshot taken."""
    transcript = Transcript(_opening())
    snapshot = transcript.messages
    transcript.append(UserMessage(content="more"))
    assert len(snapshot) == 2
    assert [m.role for m in transcript] == ["system", "user", "user"]
