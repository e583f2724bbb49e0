"""Large Temporal payloads go by reference through a blob store; without one, a guard stops them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TypeVar

import pytest
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload, WorkflowExecution
from temporalio.api.enums.v1 import HistoryEventFilterType
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import History
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from agents import tool
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, observation, reply
from orchestrator import Orchestrator, RunConfig
from orchestrator.temporal import (
    BlobError,
    Registry,
    TemporalBackend,
    connect,
)
from orchestrator.temporal._codec import (
    DEFAULT_INLINE_LIMIT,
    REFERENCE_ENCODING,
    BlobCodec,
    FileBlobStore,
    PayloadGuard,
)
from tests._temporal_team import results_of
from tests.test_temporal import anyio_backend, server  # noqa: F401

SYNTHESIS = RunConfig().synthesis_instructions

BIG = 3_000_000
_M = TypeVar("_M", bound=Message)
PLAN = {"subtasks": [{"id": "a", "goal": "Read the big file."}], "rationale": "one read"}


def _payload(size: int, fill: bytes = b"x") -> Payload:
    """A JSON payload of about `size` bytes."""
    return Payload(metadata={"encoding": b"json/plain"}, data=fill * size)


def _codec(tmp_path: Path) -> BlobCodec:
    """A codec on a fresh folder store."""
    return BlobCodec(FileBlobStore(tmp_path / "blobs"))


def _blobs(tmp_path: Path) -> list[Path]:
    """The blob files in the store folder."""
    return [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]


@pytest.mark.anyio
async def test_small_payloads_pass_unchanged(tmp_path: Path) -> None:
    """A payload under the inline limit is sent as it is, and nothing is stored."""
    small = _payload(1000)
    assert await _codec(tmp_path).encode([small]) == [small]
    assert _blobs(tmp_path) == []


@pytest.mark.anyio
async def test_large_payload_becomes_a_reference_and_round_trips(tmp_path: Path) -> None:
    """A payload over the limit becomes a small reference that decodes to the same bytes."""
    codec = _codec(tmp_path)
    large = _payload(DEFAULT_INLINE_LIMIT + 1)
    [reference] = await codec.encode([large])
    assert reference.metadata["encoding"] == REFERENCE_ENCODING
    assert reference.ByteSize() < 200
    key = hashlib.sha256(large.SerializeToString(deterministic=True)).hexdigest()
    assert reference.data == key.encode()
    assert _blobs(tmp_path) == [tmp_path / "blobs" / key[:2] / key]
    [back] = await codec.decode([reference])
    assert back.SerializeToString() == large.SerializeToString()


@pytest.mark.anyio
async def test_same_content_is_stored_once(tmp_path: Path) -> None:
    """Encoding the same large payload twice stores one blob and gives equal references."""
    codec = _codec(tmp_path)
    large = _payload(DEFAULT_INLINE_LIMIT * 2)
    first = await codec.encode([large, large])
    second = await codec.encode([large])
    assert first == [second[0], second[0]]
    assert len(_blobs(tmp_path)) == 1


@pytest.mark.anyio
async def test_missing_blob_is_a_clear_error(tmp_path: Path) -> None:
    """A reference to a blob the store lacks names the key and the store."""
    [reference] = await _codec(tmp_path).encode([_payload(DEFAULT_INLINE_LIMIT + 1)])
    other = BlobCodec(FileBlobStore(tmp_path / "elsewhere"))
    with pytest.raises(BlobError, match=f"blob {reference.data.decode()} is not in FileBlobStore"):
        await other.decode([reference])


@pytest.mark.anyio
async def test_corrupted_blob_is_a_clear_error(tmp_path: Path) -> None:
    """A blob whose bytes no longer match its key is refused as corrupt."""
    codec = _codec(tmp_path)
    [reference] = await codec.encode([_payload(DEFAULT_INLINE_LIMIT + 1)])
    [blob] = _blobs(tmp_path)
    blob.write_bytes(blob.read_bytes()[:-1] + b"y")
    with pytest.raises(BlobError, match="is corrupt"):
        await codec.decode([reference])


@pytest.mark.anyio
async def test_guard_stops_payloads_over_its_size() -> None:
    """Without a store, payloads pass unless they are over the guard size: then advice is raised."""
    guard = PayloadGuard(limit=1000)
    small = _payload(900)
    assert await guard.encode([small]) == [small]
    assert await guard.decode([small]) == [small]
    with pytest.raises(ApplicationError, match=r"a 0\.0 MB payload is over .* --blobs DIR") as err:
        await guard.encode([_payload(2000)])
    assert (err.value.type, err.value.non_retryable) == ("PayloadTooLarge", True)


@pytest.mark.anyio
async def test_guard_refuses_references() -> None:
    """Without a store, a reference payload cannot be decoded, and the error says so."""
    reference = Payload(metadata={"encoding": REFERENCE_ENCODING}, data=b"ab" * 32)
    with pytest.raises(BlobError, match="no blob store is configured"):
        await PayloadGuard().decode([reference])


def _text(name: str, size: int) -> str:
    """The text of a file of about `size` characters."""
    return f"{name}: " + "lorem ipsum " * (size // 12)


@tool(timeout=10.0, max_chars=10 * BIG)
async def read_big(name: str) -> str:
    """Read a big file.

    Args:
        name: The file.
    """
    return _text(name, BIG)


@tool(timeout=10.0, evidence=lambda args, text: [(args["name"], text[-24:])])
async def fetch_big(name: str) -> str:
    """Fetch a big page, of which the model reads the start (the default 2,000 characters); the
    evidence hook cites its end.

    Args:
        name: The page.
    """
    return _text(name, BIG)


def _team(tool_name: str = "read_big") -> FunctionModel:
    """One sub-agent reads the 3 MB file, then answers with its length (`read_big`, whose result
    it reads whole) or its name (`fetch_big`, of which it reads the start: a length would be a
    number it was not shown); the synthesis quotes it."""

    def decide(request: ModelRequest) -> Turn:
        if request.output is not None:
            return reply(json.dumps(PLAN))
        if request.messages[0].content == SYNTHESIS:
            return reply("Synthesis: " + results_of(request)[:200])
        observed = [observation(m.content or "") for m in request.messages if m.role == "tool"]
        if observed and tool_name == "fetch_big":
            return reply(f"The page is {observed[0].split(':')[0]}.")
        if observed:
            return reply(f"The file has {len(observed[0])} characters.")
        return call(tool_name, name="big.txt")

    return FunctionModel(decide, name="big")


async def _run(client: Client, run_id: str, queue: str) -> str:
    """Run the big-file team on `queue` with a worker of `client`; the answer."""
    registry = Registry.of({"big": _team()}, tools=[read_big])
    async with registry.worker(client, task_queue=queue, sticky_timeout=1.0):
        outcome = await TemporalBackend(client=client, task_queue=queue, execution_timeout=30).run(
            "g", model="big", tools=["read_big"], run_id=run_id
        )
    return outcome.answer


async def _raw_history(client: Client, workflow_id: str) -> History:
    """A workflow's history as the server stores it (payloads not decoded by the client's codec),
    followed by the histories of its child workflows."""
    request = GetWorkflowExecutionHistoryRequest(
        namespace=client.namespace,
        execution=WorkflowExecution(workflow_id=workflow_id),
        history_event_filter_type=HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
    )
    history = History()
    while True:
        page = await client.workflow_service.get_workflow_execution_history(request)
        history.events.extend(page.history.events)
        if not page.next_page_token:
            break
        request.next_page_token = page.next_page_token
    for event in list(history.events):
        if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            child = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
            history.events.extend((await _raw_history(client, child)).events)
    return history


def _nested(message: Message, kind: type[_M]) -> list[_M]:
    """Every message of type `kind` nested in a protobuf message (itself included)."""
    if isinstance(message, kind):
        return [message, *_inner(message, kind)]
    return _inner(message, kind)


def _inner(message: Message, kind: type[_M]) -> list[_M]:
    """Every message of type `kind` in the fields of `message`."""
    found: list[_M] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if isinstance(value, Message):
            items = [value]
        elif field.message_type.GetOptions().map_entry:
            items = list(value.values())
        else:
            items = list(value)
        for item in items:
            if isinstance(item, Message):  # map values may be scalars
                found.extend(_nested(item, kind))
    return found


async def _failure_messages(client: Client, run_id: str) -> str:
    """The messages of every failure recorded in the run's histories, one per line."""
    history = await _raw_history(client, run_id)
    return "\n".join(f.message for f in _nested(history, Failure))


@pytest.mark.slow
@pytest.mark.anyio
async def test_large_transcript_runs_through_the_blob_store(
    server: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A 3 MB tool result and the model request after it go by reference: the run completes, no
    stored payload is over the inline limit, and the answer is the in-process one."""
    local = await Orchestrator(_team(), [read_big]).run("g", run_id="big1")
    client = await connect(server, blobs=tmp_path / "blobs")
    answer = await _run(client, "big1", "blobs")
    assert answer == local.answer
    assert f"The file has {len(_text('big.txt', BIG))} characters" in answer  # all of it
    history = await _raw_history(client, "big1")
    payloads = _nested(history, Payload)
    assert max(p.ByteSize() for p in payloads) <= DEFAULT_INLINE_LIMIT
    assert any(p.metadata.get("encoding") == REFERENCE_ENCODING for p in payloads)
    assert _blobs(tmp_path)


@pytest.mark.slow
@pytest.mark.anyio
async def test_without_a_store_the_tool_fails_once_with_advice(server: str) -> None:  # noqa: F811
    """Without a blob store the 3 MB tool result fails its activity once, not retried, and the
    sub-agent reads the guard's advice as the tool's failure."""
    client = await connect(server)
    team = _team()
    registry = Registry.of({"big": team}, tools=[read_big])
    async with registry.worker(client, task_queue="guarded", sticky_timeout=1.0):
        await TemporalBackend(client=client, task_queue="guarded", execution_timeout=30).run(
            "g", model="big", tools=["read_big"], run_id="big2"
        )
    observed = [m.content or "" for r in team.requests for m in r.messages if m.role == "tool"]
    assert any("a 3.0 MB payload is over Temporal's 2 MB limit" in text for text in observed)
    assert "a 3.0 MB payload is over Temporal's 2 MB limit" in await _failure_messages(
        client, "big2"
    )
    history = await _raw_history(client, "big2")
    started = [e for e in history.events if e.HasField("activity_task_started_event_attributes")]
    assert {e.activity_task_started_event_attributes.attempt for e in started} == {1}


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_long_result_the_model_reads_the_start_of_is_cut_in_the_activity(
    server: str,  # noqa: F811
) -> None:
    """A 3 MB result of which the model reads 2,000 characters leaves its activity cut to what
    the loop reads (no blob store needed, no payload near the limit), with what the evidence hook
    made of the whole of it: the run ends as it does in process, with the same reports."""
    # Not held to passages (`cite`): what is checked here is the cut, not the answer.
    unheld = RunConfig(cite=False)
    local = await Orchestrator(_team("fetch_big"), [fetch_big], config=unheld).run(
        "g", run_id="big4"
    )
    client = await connect(server)
    registry = Registry.of({"big": _team("fetch_big")}, tools=[fetch_big])
    async with registry.worker(client, task_queue="cut", sticky_timeout=1.0):
        outcome = await TemporalBackend(client=client, task_queue="cut", execution_timeout=30).run(
            "g", model="big", tools=["fetch_big"], run_id="big4", config=unheld
        )
    assert outcome.status == local.status == "complete"
    assert outcome.answer == local.answer
    assert [r.evidence for r in outcome.reports] == [r.evidence for r in local.reports]
    (evidence,) = outcome.reports[0].evidence
    assert evidence.excerpt == _text("big.txt", BIG)[-24:]
    history = await _raw_history(client, "big4")
    assert max(p.ByteSize() for p in _nested(history, Payload)) < 200_000


@tool(timeout=10.0, max_chars=10 * BIG)
async def read_one_mb(name: str) -> str:
    """Read a 1.1 MB file (under the guard size: two of them in one transcript are over it).

    Args:
        name: The file.
    """
    return _text(name, 1_100_000)


def _twice() -> FunctionModel:
    """A sub-agent that reads two 1.1 MB files before answering."""

    def decide(request: ModelRequest) -> Turn:
        if request.output is not None:
            return reply(json.dumps(PLAN))
        if request.messages[0].content == SYNTHESIS:
            return reply("The synthesis.")
        read = sum(m.role == "tool" for m in request.messages)
        return reply("Read both.") if read == 2 else call("read_one_mb", name=f"f{read}")

    return FunctionModel(decide, name="twice")


@pytest.mark.slow
@pytest.mark.anyio
async def test_without_a_store_an_oversized_model_request_ends_the_agent_with_advice(
    server: str,  # noqa: F811
) -> None:
    """A 2.2 MB model request is refused by the workflow before it is sent (Temporal would retry
    the workflow's step until the run's timeout): the sub-agent ends with the advice in its notes,
    and the run ends at once."""
    client = await connect(server)
    registry = Registry.of({"twice": _twice()}, tools=[read_one_mb])
    async with registry.worker(client, task_queue="wft", sticky_timeout=1.0):
        outcome = await TemporalBackend(client=client, task_queue="wft", execution_timeout=30).run(
            "g", model="twice", tools=["read_one_mb"], run_id="big3"
        )
    notes = "\n".join(note for report in outcome.reports for note in report.notes)
    assert "the model request is 2.2 MB, over what Temporal takes (2 MB)" in notes
    assert outcome.status != "complete"
    assert "PayloadTooLarge" not in await _failure_messages(client, "big3")
