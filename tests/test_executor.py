"""The executor's ReAct loop, driven by scripted models: every exit ends in a report."""

from __future__ import annotations

import anyio
import pytest
from structlog.testing import capture_logs

from agents import (
    AgentLimits,
    Budget,
    ConfigurationError,
    Executor,
    ToolFailure,
    Usage,
    cites_evidence,
    tool,
)
from agents.errors import MalformedResponse, ModelRequestError
from agents.events import AgentEvent, ToolCalled
from agents.executor import DEFAULT_INSTRUCTIONS
from agents.guards import Stop
from agents.models import ModelRequest
from agents.testing import FunctionModel, ScriptedModel, Turn, call, calls, observation, reply
from agents.tools import Evidence, Toolbox
from memory import AssistantMessage, SystemMessage, ToolCall, ToolMessage, Transcript, UserMessage

pytestmark = pytest.mark.anyio


@tool
async def search(query: str) -> str:
    """Search the corpus.

    Args:
        query: What to look for.
    """
    return f"result for {query}"


@tool(evidence=lambda args, value: [(f"doc-{args['n']}", value)])
async def lookup(n: int) -> str:
    """Read one document."""
    return f"document {n} says 42"


@tool(timeout=0.05)
async def slow() -> str:
    """Never answers in time."""
    await anyio.sleep_forever()
    return "unreachable"


@tool
def boom() -> str:
    """Always crashes."""
    raise RuntimeError("kaput")


@tool
async def hang() -> str:
    """Waits until the agent is stopped."""
    await anyio.sleep_forever()
    return "unreachable"


def _results(request: ModelRequest) -> dict[str, ToolMessage]:
    """The tool results answering the last assistant turn, by call id (the transcript is valid),
    each without its `[OBSERVE]` line (`test_every_observation_starts_with_its_facts` pins it)."""
    Transcript(request.messages).check()
    last = max(i for i, m in enumerate(request.messages) if isinstance(m, AssistantMessage))
    found = [m for m in request.messages[last + 1 :] if isinstance(m, ToolMessage)]
    assert len({m.tool_call_id for m in found}) == len(found)
    assert all(m.content.startswith("[OBSERVE] ") for m in found)
    return {m.tool_call_id: m.model_copy(update={"content": observation(m.content)}) for m in found}


def _ids(turn: Turn) -> list[str]:
    assert not isinstance(turn, BaseException | str)
    message = turn.message if not isinstance(turn, AssistantMessage) else turn
    return [c.id for c in message.tool_calls]


def _tool_names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def _last_text(request: ModelRequest) -> str:
    message = request.messages[-1]
    assert isinstance(message, UserMessage), message
    return message.content


class _Sink:
    """Collects agent events."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    async def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def tool_calls(self) -> dict[str, ToolCalled]:
        found = [e for e in self.events if isinstance(e, ToolCalled)]
        assert len({e.call_id for e in found}) == len(found), "a call was traced twice"
        return {e.call_id: e for e in found}


async def test_happy_path_multi_step() -> None:
    """Tool results feed the next decision, and a plain answer finishes the run as done."""
    first, second = call("search", query="cats"), call("search", query="dogs")
    model = ScriptedModel([first, second, reply("Cats and dogs both purr, mostly cats.")])
    report = await Executor(model, tools=[search]).run("Compare pets", context="Nothing yet.")
    model.assert_complete()
    assert (report.status, report.ok, report.stop_reason) == ("done", True, None)
    assert report.answer == "Cats and dogs both purr, mostly cats."
    assert report.steps == 3
    assert report.usage == Usage(requests=3, prompt_tokens=30, completion_tokens=15, tool_calls=2)
    assert [e.source for e in report.evidence] == [
        'search({"query": "cats"})',
        'search({"query": "dogs"})',
    ]
    opening = model.requests[0]
    assert opening.messages == (
        SystemMessage(content=DEFAULT_INSTRUCTIONS),
        UserMessage(content="Task: Compare pets\n\nWhat is already known:\nNothing yet."),
    )
    assert _tool_names(opening) == ["search", "report_issue"]
    [answer] = _results(model.requests[1]).values()
    assert (answer.tool_call_id, answer.content, answer.ok) == (
        _ids(first)[0],
        "result for cats",
        True,
    )
    assert _results(model.requests[2])[_ids(second)[0]].content == "result for dogs"


async def test_tools_of_one_turn_run_concurrently() -> None:
    """Calls of one turn overlap, and one failing does not lose its sibling's result."""
    left_started, right_started = anyio.Event(), anyio.Event()

    @tool(timeout=10)
    async def left() -> str:
        """Waits for right."""
        left_started.set()
        await right_started.wait()
        return "left done"

    @tool(timeout=10)
    async def right() -> str:
        """Waits for left, then fails."""
        right_started.set()
        await left_started.wait()
        raise ToolFailure("right broke")

    turn = calls(("left", {}), ("right", {}))
    model = ScriptedModel([turn, reply("done")])
    report = await Executor(model, tools=[left, right]).run("both")
    left_id, right_id = _ids(turn)
    results = _results(model.requests[1])
    assert (results[left_id].ok, results[left_id].content) == (True, "left done")
    assert (results[right_id].ok, results[right_id].content) == (False, "Error: right right broke")
    assert report.status == "done"
    assert [e.tool for e in report.evidence] == ["left"]


async def test_every_call_gets_exactly_one_result() -> None:
    """Malformed, unknown, timed-out, crashed and fine calls each get one result, in call order."""
    turn = calls(
        ("search", '{"query": '),
        ("serch", {"query": "x"}),
        ("slow", {}),
        ("boom", {}),
        ("search", {"query": "ok"}),
        ("search", {"query": 7, "extra": True}),
    )
    model = ScriptedModel([turn, reply("done")])
    sink = _Sink()
    await Executor(model, tools=[search, slow, boom]).run("t", events=sink)
    ids = _ids(turn)
    request = model.requests[1]
    tool_messages = [m for m in request.messages if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tool_messages] == ids
    results = _results(request)
    assert results[ids[0]].content.startswith("Error: arguments are not valid JSON")
    assert results[ids[1]].content == "Unknown tool 'serch'. Valid tools: search, slow, boom."
    assert results[ids[2]].content == "Error: slow timed out after 0.05s"
    assert results[ids[3]].content == "Error: boom RuntimeError: kaput"
    assert (results[ids[4]].ok, results[ids[4]].content) == (True, "result for ok")
    assert "extra: Extra inputs are not permitted" in results[ids[5]].content
    errors = {call_id: event.error_kind for call_id, event in sink.tool_calls().items()}
    assert errors == {
        ids[0]: "malformed_arguments",
        ids[1]: "unknown_tool",
        ids[2]: "timeout",
        ids[3]: "crashed",
        ids[4]: None,
        ids[5]: "invalid_arguments",
    }


async def test_tool_called_events_carry_what_went_wrong() -> None:
    """A failed call's event says what the model read (one line), beside the kind of failure."""
    turn = calls(("slow", {}), ("boom", {}), ("search", {"query": "ok"}))
    sink = _Sink()
    await Executor(ScriptedModel([turn, reply("done")]), tools=[search, slow, boom]).run(
        "t", events=sink
    )
    traced = [(e.tool, e.error_kind, e.error) for e in sink.tool_calls().values()]
    assert traced == [
        ("slow", "timeout", "Error: slow timed out after 0.05s"),
        ("boom", "crashed", "Error: boom RuntimeError: kaput"),
        ("search", None, None),
    ]


async def test_oversize_arguments_are_refused_and_never_re_sent() -> None:
    """Megabytes of arguments are refused unread, the model reads the limit, and the transcript
    keeps a short note in their place, so no later request carries them."""
    huge = "x" * 1_000_000
    model = ScriptedModel([call("search", query=huge), reply("done")])
    report = await Executor(model, tools=[search], require_evidence=False).run("t")
    assert report.status == "done"
    assert report.evidence == ()
    later = model.requests[1]
    assert huge not in later.model_dump_json()
    (result,) = _results(later).values()
    assert result.content.startswith(
        "Error: arguments of 1,000,013 characters were not read: search takes at most 65,536."
    )
    (turn,) = [m for m in later.messages if isinstance(m, AssistantMessage)]
    assert "1,000,013 characters of arguments" in turn.tool_calls[0].arguments


async def test_duplicate_call_ids_from_the_model_are_made_unique() -> None:
    """Calls reusing an id (in a turn or across turns) get fresh ids, each with its one result."""
    twice = AssistantMessage(
        tool_calls=(
            ToolCall(id="dup", name="search", arguments='{"query": "a"}'),
            ToolCall(id="dup", name="search", arguments='{"query": "b"}'),
        )
    )
    again = AssistantMessage(
        tool_calls=(ToolCall(id="dup", name="search", arguments='{"query": "c"}'),)
    )
    model = ScriptedModel([twice, again, reply("done")])
    await Executor(model, tools=[search]).run("t")
    turn_one = _results(model.requests[1])
    assert [m.content for m in turn_one.values()] == ["result for a", "result for b"]
    assert "dup" in turn_one
    turn_two = _results(model.requests[2])
    assert [m.content for m in turn_two.values()] == ["result for c"]
    assert "dup" not in turn_two


async def test_step_limit_asks_for_a_last_tool_less_answer() -> None:
    """At the step limit the model is asked, without tools, for its best answer from what it has."""
    model = ScriptedModel(
        [call("search", query="a"), call("search", query="b"), reply("Partly: a and b.")]
    )
    report = await Executor(model, tools=[search], limits=AgentLimits(max_steps=2)).run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "steps")
    assert report.answer == "Partly: a and b."
    last = model.requests[-1]
    assert last.tools == ()
    assert _last_text(last).startswith("Stop now: the steps limit was reached. Using only what")
    assert [m.content for m in _results(last).values()] == ["result for b"]


async def test_failed_last_answer_falls_back_to_a_digest() -> None:
    """If the last tool-less call fails, the answer is a digest of the evidence, marked partial."""
    model = ScriptedModel(
        [call("search", query="a"), call("search", query="b"), ModelRequestError("HTTP 400: no")]
    )
    report = await Executor(model, tools=[search], limits=AgentLimits(max_steps=2)).run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "steps")
    assert report.answer == (
        "Incomplete: stopped early (steps).\n"
        "What was gathered:\n"
        '- [search({"query": "a"})] result for a\n'
        '- [search({"query": "b"})] result for b'
    )
    assert report.notes == ("final answer call failed: HTTP 400: no",)


async def test_token_limit_ends_with_a_digest() -> None:
    """Spending the token budget ends the run as partial without asking the model again."""
    model = ScriptedModel([call("search", query="a"), call("search", query="b")])
    report = await Executor(model, tools=[search], limits=AgentLimits(max_tokens=30)).run("t")
    model.assert_complete()
    assert len(model.requests) == 2
    assert (report.status, report.stop_reason) == ("partial", "tokens")
    assert report.usage.total_tokens == 30
    assert report.answer.startswith("Incomplete: stopped early (tokens).\nWhat was gathered:")
    assert len(report.evidence) == 2


async def test_tool_call_limit_skips_extra_calls() -> None:
    """Calls past the tool-call budget are answered "skipped", then the model answers tool-less."""
    turn = calls(("search", {"query": "a"}), ("search", {"query": "b"}), ("search", {"query": "c"}))
    model = ScriptedModel([turn, reply("a and b only")])
    sink = _Sink()
    limits = AgentLimits(max_tool_calls=2)
    report = await Executor(model, tools=[search], limits=limits).run("t", events=sink)
    model.assert_complete()
    assert (report.status, report.stop_reason, report.answer) == (
        "partial",
        "tool_calls",
        "a and b only",
    )
    assert report.usage.tool_calls == 2
    last = model.requests[-1]
    assert last.tools == ()
    results = list(_results(last).values())
    assert [r.content for r in results[:2]] == ["result for a", "result for b"]
    assert results[2].content.startswith("Skipped: the tool-call budget is spent.")
    assert [e.error_kind for e in sink.tool_calls().values()] == [None, None, "skipped"]


async def test_deadline_keeps_finished_results_and_cancels_the_rest() -> None:
    """At the deadline a hanging call gets a "cancelled" result; a finished sibling's is kept."""
    turn = calls(("search", {"query": "fast"}), ("hang", {}))
    model = ScriptedModel([turn])
    sink = _Sink()
    executor = Executor(model, tools=[search, hang], limits=AgentLimits(deadline_s=0.5))
    report = await executor.run("t", events=sink)
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "deadline")
    assert [e.excerpt for e in report.evidence] == ["result for fast"]
    assert "result for fast" in report.answer
    search_id, hang_id = _ids(turn)
    traced = sink.tool_calls()
    assert (traced[search_id].ok, traced[search_id].error_kind) == (True, None)
    assert (traced[hang_id].ok, traced[hang_id].error_kind) == (False, "cancelled")


@pytest.mark.parametrize("kind", ["event", "stop"])
async def test_stop_event_ends_gracefully(kind: str) -> None:
    """Setting `stop` (an anyio.Event or a Stop) ends the run with a partial report."""
    stop: anyio.Event | Stop = anyio.Event() if kind == "event" else Stop()

    @tool(timeout=None)
    async def halt() -> str:
        """The caller presses stop while this runs."""
        stop.set()
        await anyio.sleep_forever()
        return "unreachable"

    turn = call("halt")
    model = ScriptedModel([call("search", query="a"), turn])
    sink = _Sink()
    report = await Executor(model, tools=[search, halt]).run("t", stop=stop, events=sink)
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "cancelled")
    assert report.answer.startswith("Incomplete: stopped early (cancelled).")
    assert [e.excerpt for e in report.evidence] == ["result for a"]
    assert sink.tool_calls()[_ids(turn)[0]].error_kind == "cancelled"


async def test_stop_during_event_back_pressure_loses_nothing_and_doubles_nothing() -> None:
    """A stop that lands while the sink holds the agent keeps each result exactly once."""
    stop = anyio.Event()
    traced: list[AgentEvent] = []

    async def slow_sink(event: AgentEvent) -> None:
        traced.append(event)
        if isinstance(event, ToolCalled) and not stop.is_set():
            stop.set()
            await anyio.sleep_forever()  # a full event stream: the agent waits here

    turn = calls(("search", {"query": "a"}), ("search", {"query": "b"}))
    model = ScriptedModel([turn])
    report = await Executor(model, tools=[search]).run("t", stop=stop, events=slow_sink)
    assert (report.status, report.stop_reason) == ("partial", "cancelled")
    assert [e.excerpt for e in report.evidence] == ["result for a", "result for b"]
    call_ids = [e.call_id for e in traced if isinstance(e, ToolCalled)]
    assert len(call_ids) == len(set(call_ids))


async def test_loop_is_first_warned_about_then_stopped() -> None:
    """A repeated call earns a plain warning; repeating again stops the run as stuck."""
    model = ScriptedModel(
        [
            call("search", query="cats"),
            call("search", query=" Cats "),
            call("search", query="CATS"),
            reply("Cats, as far as I got."),
        ]
    )
    sink = _Sink()
    report = await Executor(model, tools=[search]).run("t", events=sink)
    model.assert_complete()
    assert isinstance(model.requests[1].messages[-1], ToolMessage)
    assert _last_text(model.requests[2]) == (
        "Loop warning: you already called search with these same arguments. "
        "Change approach, or give your final answer now."
    )
    assert model.requests[2].tools != ()
    last = model.requests[3]
    assert last.tools == ()
    assert _last_text(last).startswith(
        "Stop now: you already called search with these same arguments."
    )
    assert (report.status, report.stop_reason) == ("partial", "stuck")
    assert report.answer == "Cats, as far as I got."
    assert sink.types.count("loop_warning") == 1
    assert "stopped in a loop: you already called search with these same arguments" in report.notes


async def test_malformed_reply_is_fed_back_and_the_model_recovers() -> None:
    """An unparseable reply is shown back to the model with the problem, and it may try again."""
    model = ScriptedModel([MalformedResponse("the reply is not JSON", raw="{oops"), reply("Fine.")])
    report = await Executor(model).run("t")
    model.assert_complete()
    assert (report.status, report.answer) == ("done", "Fine.")
    retry = model.requests[1].messages
    # Quoted in feedback, never replayed as an assistant turn (it would read as a valid answer).
    assert retry[-2] == UserMessage(content="Task: t")
    assert retry[-1] == UserMessage(
        content='Your last reply could not be used: the reply is not JSON. It began: "{oops" Try again.'
    )
    assert report.notes == ("unusable model reply: the reply is not JSON",)


async def test_too_many_malformed_replies_end_the_run() -> None:
    """Past max_malformed unusable replies in a row the run ends with a report, not an error."""
    bad = [MalformedResponse(f"bad {i}", raw="?") for i in range(4)]
    model = ScriptedModel([call("search", query="a"), *bad])
    report = await Executor(model, tools=[search], max_malformed=2).run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "error")
    assert report.answer.startswith(
        "Incomplete: stopped early (error: 3 unusable replies in a row)"
    )
    assert "result for a" in report.answer
    # With something gathered, the streak is followed by one tool-less last word.
    assert model.requests[-1].tools == ()
    assert model.requests[-1].purpose == "wrap_up"


async def test_a_streak_of_unusable_replies_ends_with_a_tool_less_last_word() -> None:
    """A model that keeps imitating a call is asked once more with no tool on the menu; its
    answer is kept (partial: a last word is not a checked final answer in an uncited run)."""
    bad = [MalformedResponse(f"bad {i}", raw="?") for i in range(3)]
    model = ScriptedModel([call("search", query="a"), *bad, "From the search: a."])
    report = await Executor(model, tools=[search], max_malformed=2).run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "error")
    assert report.answer == "From the search: a."
    assert "3 unusable replies in a row" in (model.requests[-1].messages[-1].content or "")


async def test_no_last_word_after_unusable_replies_with_nothing_gathered() -> None:
    """With nothing gathered there is nothing to answer from: the streak ends the run."""
    model = ScriptedModel([MalformedResponse(f"bad {i}", raw="?") for i in range(3)])
    report = await Executor(model, tools=[search], max_malformed=2).run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("failed", "error")


async def test_too_many_empty_replies_end_the_run() -> None:
    """Empty replies count as unusable replies in a row, not as fresh starts."""
    model = ScriptedModel(["", "", "", "never asked"])
    report = await Executor(model, max_malformed=2, limits=AgentLimits(max_steps=10)).run("t")
    assert len(model.requests) == 3
    assert (report.status, report.stop_reason) == ("failed", "error")
    assert model.requests[1].messages[-1] == UserMessage(
        content="Your last reply could not be used: the reply was empty: call a tool or give an "
        "answer. Try again."
    )


async def test_model_error_ends_in_a_failed_report() -> None:
    """A refused model request ends the run with a failed report when nothing was gathered."""
    model = ScriptedModel([ModelRequestError("HTTP 401: bad key", status=401)])
    report = await Executor(model).run("t")
    assert (report.status, report.stop_reason) == ("failed", "error")
    assert report.answer == (
        "Incomplete: stopped early (error: HTTP 401: bad key).\nNothing usable was gathered."
    )
    assert report.notes == ("model error: HTTP 401: bad key",)


async def test_model_error_after_progress_is_partial() -> None:
    """A model failure after some evidence ends the run as partial with that evidence."""
    model = ScriptedModel([call("search", query="a"), ModelRequestError("HTTP 404: gone")])
    report = await Executor(model, tools=[search]).run("t")
    assert (report.status, report.stop_reason) == ("partial", "error")
    assert [e.excerpt for e in report.evidence] == ["result for a"]


async def test_acceptance_check_rejects_then_accepts() -> None:
    """An answer without citations is sent back with the sources to cite; a cited one is done."""
    model = ScriptedModel(
        [call("lookup", n=7), reply("The answer is 42."), reply("The answer is 42 [doc-7].")]
    )
    report = await Executor(model, tools=[lookup], acceptance=cites_evidence).run("t")
    model.assert_complete()
    assert (report.status, report.answer) == ("done", "The answer is 42 [doc-7].")
    assert _last_text(model.requests[2]) == (
        "Your answer was not accepted: cite the evidence you used in brackets, one of: [doc-7]. "
        "Fix it."
    )
    assert report.notes == (
        "answer not accepted: cite the evidence you used in brackets, one of: [doc-7]",
    )


async def test_exhausted_rejections_end_as_partial() -> None:
    """After max_rejections failed checks the last answer is returned as partial."""
    model = ScriptedModel([reply("guess one"), reply("guess two")])
    executor = Executor(model, acceptance=cites_evidence, max_rejections=1)
    report = await executor.run("t")
    model.assert_complete()
    assert (report.status, report.stop_reason, report.answer) == (
        "partial",
        "acceptance",
        "guess two",
    )
    assert _last_text(model.requests[1]).startswith("Your answer was not accepted: you gathered no")


async def test_report_issue_blocked() -> None:
    """report_issue(blocked) ends the run at once as blocked, with the reason as the answer."""
    model = ScriptedModel([call("report_issue", kind="blocked", reason="The API needs a key.")])
    report = await Executor(model).run("t")
    model.assert_complete()
    assert (report.status, report.answer, report.evidence) == (
        "blocked",
        "The API needs a key.",
        (),
    )


async def test_report_issue_invalidates() -> None:
    """report_issue(invalidates) is recorded in the report while the agent still answers."""
    model = ScriptedModel(
        [
            call("report_issue", kind="invalidates", reason="The city was renamed."),
            reply("Use Oslo."),
        ]
    )
    report = await Executor(model).run("t")
    model.assert_complete()
    assert (report.status, report.answer) == ("done", "Use Oslo.")
    assert report.invalidates == "The city was renamed."
    assert report.evidence == ()
    assert _results(model.requests[1]).popitem()[1].content == "Noted; the planner will be told."


async def test_signals_can_be_turned_off() -> None:
    """With signals=False the model is not offered report_issue."""
    model = ScriptedModel([reply("ok")])
    await Executor(model, tools=[search], signals=False, require_evidence=False).run("t")
    assert _tool_names(model.requests[0]) == ["search"]


async def test_a_run_without_signals_neither_offers_nor_runs_report_issue() -> None:
    """`run(signals=False)` takes `report_issue` off that run's menu, where the executor offers
    it; a model that calls it anyway is told the menu, and nothing is reported."""
    model = ScriptedModel(
        [
            call("report_issue", kind="blocked", reason="The API needs a key."),
            call("search", query="a"),
            reply("Found: result for a [search]."),
        ]
    )
    executor = Executor(model, tools=[search])
    report = await executor.run("Search for a.", signals=False)
    model.assert_complete()
    assert _tool_names(model.requests[0]) == ["search"]
    [refused] = _results(model.requests[1]).values()
    assert refused.content.startswith("Unknown tool 'report_issue'")
    assert (report.status, report.invalidates) == ("done", None)
    model = ScriptedModel([reply("ok")])
    await Executor(model, tools=[search], require_evidence=False).run("t")  # the default: on
    assert _tool_names(model.requests[0]) == ["search", "report_issue"]


async def test_allowed_tools_restrict_the_menu() -> None:
    """allowed_tools hides other tools from the model and refuses calls to them."""
    model = ScriptedModel([call("search", query="a"), reply("ok")])
    executor = Executor(model, [search, lookup], allowed_tools=["lookup"], require_evidence=False)
    await executor.run("t")
    assert _tool_names(model.requests[0]) == ["lookup", "report_issue"]
    [result] = _results(model.requests[1]).values()
    assert result.content == "Unknown tool 'search'. Valid tools: lookup."


async def test_events_arrive_in_order_and_the_breaker_takes_a_tool_off_the_menu() -> None:
    """The sink sees model, tool, breaker and loop events in order; the model hears of the breaker
    (one retry after a failure is not a loop; the second repeat is)."""

    @tool
    async def flaky(city: str) -> str:
        """Always down."""
        raise ToolFailure("503 from upstream")

    model = ScriptedModel(
        [
            call("flaky", city="Oslo"),
            call("flaky", city="Oslo"),
            call("flaky", city="Oslo"),
            reply("gave up"),
        ]
    )
    sink = _Sink()
    toolbox = Toolbox([flaky, search], breaker_threshold=1)
    executor = Executor(model, tools=toolbox, require_evidence=False)
    report = await executor.run("t", events=sink, run_id="r1", agent_id="a1")
    assert sink.types == [
        "model_called",
        "tool_called",
        "breaker_opened",
        "model_called",
        "tool_called",
        "model_called",
        "tool_called",
        "loop_warning",
        "model_called",
    ]
    assert all((e.run_id, e.agent_id) == ("r1", "a1") for e in sink.events)
    assert [e.step for e in sink.events] == [1, 1, 1, 2, 2, 3, 3, 3, 4]
    assert _tool_names(model.requests[1]) == ["search", "report_issue"]
    [opened] = _results(model.requests[1]).values()
    assert "Tool 'flaky' is disabled for 30s after 1 consecutive failures" in opened.content
    [refused] = _results(model.requests[2]).values()
    assert refused.content.startswith("Tool 'flaky' is disabled")
    assert report.status == "done"


async def test_function_model_decides_from_the_request() -> None:
    """A FunctionModel sees every request and can answer from the tool results it contains."""

    def decide(request: ModelRequest) -> Turn:
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call("search", query="weather")
        return reply(f"Found: {observation(results[-1].content)}")

    model = FunctionModel(decide)
    report = await Executor(model, tools=[search]).run("t")
    assert report.answer == "Found: result for weather"
    assert len(model.requests) == 2


async def test_parent_budget_is_charged() -> None:
    """Everything the agent spends is charged to the caller's ledger as well."""
    parent = Budget()
    model = ScriptedModel([call("search", query="a"), reply("done")])
    report = await Executor(model, tools=[search]).run("t", budget=parent)
    assert parent.used == report.usage
    assert parent.used == Usage(requests=2, prompt_tokens=20, completion_tokens=10, tool_calls=1)


async def test_spent_parent_budget_stops_the_agent_before_any_request() -> None:
    """A parent ledger with nothing left ends the run at once, without a model call."""
    parent = Budget(max_tokens=100, used=Usage(prompt_tokens=100))
    model = ScriptedModel([reply("never")])
    report = await Executor(model).run("t", budget=parent)
    assert model.requests == []
    assert (report.status, report.stop_reason) == ("failed", "tokens")


async def test_logs_redact_sensitive_tool_arguments() -> None:
    """Traces of tool calls mask sensitive arguments, also when the call was invalid or malformed."""

    @tool(sensitive=["pin"])
    async def unlock(user: str, pin: str) -> str:
        """Unlock an account."""
        return "unlocked"

    good = call("unlock", user="ann", pin="90210-secret")
    invalid = call("unlock", user="ann", pin="90210-secret", extra=1)
    malformed = call("unlock", _raw='{"user": "ann", "pin": "90210-secret"')
    model = ScriptedModel([good, invalid, malformed, reply("done")])
    with capture_logs() as logs:
        await Executor(model, tools=[unlock]).run("t")
    traced = [e for e in logs if e["event"] == "tool_called"]
    assert [e["call_id"] for e in traced] == [_ids(t)[0] for t in (good, invalid, malformed)]
    assert traced[0]["args"] == {"user": "ann", "pin": "***"}
    assert traced[0]["ok"] is True
    assert (traced[1]["ok"], traced[2]["ok"]) == (False, False)
    assert "90210-secret" not in repr(logs)


async def test_report_issue_mixed_with_other_calls_is_refused() -> None:
    """report_issue in the same turn as lookups is answered with a failure and not applied."""
    model = ScriptedModel(
        [
            calls(
                ("search", {"query": "a"}), ("report_issue", {"kind": "blocked", "reason": "no"})
            ),
            reply("the answer"),
        ]
    )
    report = await Executor(model, tools=[search]).run("t")
    assert (report.status, report.answer) == ("done", "the answer")
    refusal = model.requests[1].messages[-1]
    assert isinstance(refusal, ToolMessage)
    assert (refusal.name, refusal.ok) == ("report_issue", False)
    assert refusal.content == (
        "[OBSERVE] report_issue not run (bad_call)\n"
        "Call report_issue on its own, after reading your other results."
    )


async def test_a_stop_set_before_the_run_stops_it_at_the_first_step() -> None:
    """An agent handed a Stop that is already set asks its model nothing."""
    stop = Stop()
    stop.set()
    model = ScriptedModel([reply("never asked")])
    report = await Executor(model).run("t", stop=stop)
    assert (report.status, report.stop_reason) == ("failed", "cancelled")
    assert model.requests == []


async def test_a_placeholder_answer_is_sent_back_and_the_model_asked_again() -> None:
    """A final answer that is a placeholder is refused like a failed acceptance check."""
    model = ScriptedModel([call("search", query="x"), reply("<your answer>"), reply("Forty-two.")])
    report = await Executor(model, tools=[search]).run("What is the answer?")
    model.assert_complete()
    assert (report.status, report.answer) == ("done", "Forty-two.")
    feedback = model.requests[2].messages[-1]
    assert isinstance(feedback, UserMessage)
    assert "placeholder '<your answer>'" in feedback.content


async def test_an_answer_copying_the_instructions_never_survives_the_rejections() -> None:
    """A model that parrots its prompt twice (sent back once) ends partial with a digest of what
    it gathered, whatever `max_rejections` allows an acceptance check."""
    parrot = reply(DEFAULT_INSTRUCTIONS.split(". ")[0] + ".")
    model = ScriptedModel([call("search", query="x"), parrot, parrot])
    report = await Executor(model, tools=[search], max_rejections=2).run("Find x.")
    model.assert_complete()
    assert (report.status, report.stop_reason) == ("partial", "acceptance")
    assert report.answer.startswith("Incomplete: stopped early (acceptance")
    assert '[search({"query": "x"})] result for x' in report.answer
    assert DEFAULT_INSTRUCTIONS[:40].lower() not in report.answer.lower()


async def test_paors_own_message_is_refused_as_a_tool_argument() -> None:
    """A loop warning pasted back as a search query is answered as a bad call, not run."""
    ran: list[str] = []

    @tool
    async def find(query: str) -> str:
        """Find something.

        Args:
            query: Words to look for.
        """
        ran.append(query)
        return "same thing"

    def decide(request: ModelRequest) -> Turn:
        last = request.messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Loop warning"):
            return call("find", query=last.content)
        if isinstance(last, ToolMessage) and "repeat a message you were sent" in last.content:
            return reply("Gave up.")
        return call("find", query="cats")

    report = await Executor(FunctionModel(decide), tools=[find]).run("Find cats.")
    assert ran == ["cats", "cats"]
    assert report.answer == "Gave up."


@pytest.mark.parametrize(
    ("answer", "accepted"),
    [
        ("It is 42 [doc-1].", True),
        ("It is 42 [doc-1, doc-2].", True),
        ("It is 42 [doc-1; doc-2].", True),
        ("It is 42 [doc-1, doc-9].", False),
        ("It is 42.", False),
    ],
)
def test_cites_evidence_reads_several_sources_in_one_pair_of_brackets(
    answer: str, accepted: bool
) -> None:
    """`[a, b]` cites a and b; any of them unknown is refused; no citation is refused."""
    gathered = [
        Evidence(source="doc-1", excerpt="42", tool="lookup"),
        Evidence(source="doc-2", excerpt="42", tool="lookup"),
    ]
    assert (cites_evidence(answer, gathered) is None) is accepted


def test_clone_changes_only_what_it_is_given_and_shares_the_toolbox() -> None:
    """`clone` builds a new executor from the same arguments but the changes; the toolbox (its
    breakers) is shared, and an unknown option is a configuration error."""
    base = Executor(ScriptedModel([]), tools=[search], instructions="Be brief.")
    other = base.clone(instructions="Be thorough.", cite=True)
    assert (other.instructions, other.cite) == ("Be thorough.", True)
    assert (base.instructions, base.cite) == ("Be brief.", False)
    assert other.toolbox is base.toolbox
    assert other.model is base.model
    with pytest.raises(ConfigurationError, match="Executor has no option colour"):
        base.clone(colour="red")


def test_an_executor_is_frozen_once_built() -> None:
    """Assigning to a built executor would change the runs it serves: refused, pointing at clone."""
    base = Executor(ScriptedModel([]), tools=[search], cite=False)
    with pytest.raises(AttributeError, match=r"Executor is frozen: .*clone\(cite=\.\.\.\)"):
        base.cite = True
    with pytest.raises(AttributeError, match="Executor is frozen"):
        del base.model
    assert base.cite is False
    assert base.clone(cite=True).cite is True


async def test_every_observation_starts_with_its_facts() -> None:
    """The model reads one line of what ran before each result: the tool and the arguments
    that ran (sensitive ones masked), ok or failed and why, how long, truncated or not."""

    @tool(max_chars=60, sensitive=["token"])
    async def fetch(url: str, token: str) -> str:
        """Fetch a page.

        Args:
            url: The page.
            token: The secret.
        """
        if "down" in url:
            raise ToolFailure("HTTP 503")
        return "x" * 200

    model = ScriptedModel(
        [
            calls(
                ("fetch", {"url": "https://a.example", "token": "s3cret"}),
                ("fetch", {"url": "https://down.example", "token": "s3cret"}),
                ("nope", {}),
            ),
            reply("done"),
        ]
    )
    await Executor(model, tools=[fetch]).run("t")
    heads = [m.content.split("\n", 1)[0] for m in model.requests[1].messages if m.role == "tool"]
    assert heads == [
        '[OBSERVE] fetch("https://a.example", "***") ok; truncated',
        '[OBSERVE] fetch("https://down.example", "***") failed (failed)',
        "[OBSERVE] nope not run (unknown_tool)",
    ]
    assert not [m for m in model.requests[1].messages if m.role == "tool" and "s3cret" in m.content]


# --- the evidence rule and paor's markers ------------------------------------------------------


async def test_an_answer_resting_on_no_tool_result_is_sent_back_once_then_partial() -> None:
    """An agent with tools that answers from nothing is asked once to check; then it is partial,
    saying why, and never done."""
    model = ScriptedModel([reply("255 working days."), reply("255 working days.")])
    report = await Executor(model, tools=[search]).run("How many days of leave?")
    model.assert_complete()
    assert report.status == "partial"
    assert report.stop_reason == "acceptance"
    assert "no tool result backs your answer" in report.notes[-1]
    assert "no tool result backs your answer" in (model.requests[1].messages[-1].content or "")


async def test_an_answer_after_a_tool_result_is_done() -> None:
    """The rule asks for a tool result, not a particular one: a search, then an answer, is done."""
    model = ScriptedModel([call("search", query="25 working days"), reply("25 working days.")])
    report = await Executor(model, tools=[search]).run("How many days of leave?")
    assert (report.status, report.answer) == ("done", "25 working days.")


@pytest.mark.parametrize(
    ("require", "context", "status"),
    [(None, "a said: Lyon.", "done"), (False, "", "done"), (True, "a said: Lyon.", "partial")],
)
async def test_the_evidence_rule_follows_its_setting(
    require: bool | None, context: str, status: str
) -> None:
    """By default earlier results given with the task are enough; False never asks; True always."""
    model = ScriptedModel([reply("Lyon."), reply("Lyon.")])
    executor = Executor(model, tools=[search], require_evidence=require)
    report = await executor.run("Which city?", context=context)
    assert report.status == status


async def test_an_agent_without_tools_may_answer_from_what_it_knows() -> None:
    """No tools on the menu (none given, or none allowed): nothing to ground on, nothing asked."""
    assert (await Executor(ScriptedModel([reply("4.")])).run("2 + 2?")).status == "done"
    model = ScriptedModel([reply("4.")])
    report = await Executor(model, tools=[search]).run("2 + 2?", allowed_tools=[])
    assert report.status == "done"


async def test_a_loop_warning_given_back_as_the_answer_is_never_done() -> None:
    """A model that answers with paor's own warning ends partial, and the warning is not kept."""
    warning = (
        "You already called search with these same arguments. Change approach, or give your "
        "final answer now."
    )
    model = ScriptedModel([call("search", query="x"), reply(warning), reply(warning)])
    report = await Executor(model, tools=[search]).run("Find x.")
    assert report.status == "partial"
    assert "Change approach" not in report.answer


async def test_paors_observe_line_is_taken_out_of_a_tool_argument() -> None:
    """A query that pastes the [OBSERVE] line the model read reaches the tool without it."""
    seen: list[str] = []

    @tool
    async def find(query: str) -> str:
        """Find.

        Args:
            query: What to look for.
        """
        seen.append(query)
        return "20 weeks"

    pasted = '[OBSERVE] find("leave") ok 3ms\nparental leave weeks'
    model = ScriptedModel([call("find", query=pasted), reply("20 weeks.")])
    report = await Executor(model, tools=[find]).run("How long is parental leave?")
    assert seen == ["parental leave weeks"]
    assert report.status == "done"


async def test_a_number_no_tool_result_showed_is_sent_back_then_partial() -> None:
    """A grounded answer with a number the tools never returned ("255" for 25) is sent back once
    with the number named; a total of two numbers shown is not invented."""
    model = ScriptedModel(
        [call("search", query="25 working days"), reply("255 working days."), reply("255 days.")]
    )
    report = await Executor(model, tools=[search]).run("How many days of leave?")
    assert report.status == "partial"
    assert "numbers that no tool result shows (255)" in report.notes[-1]
    assert "(255)" in (model.requests[2].messages[-1].content or "")

    summed = ScriptedModel([call("search", query="89 and 132"), reply("221 EUR in all.")])
    assert (await Executor(summed, tools=[search]).run("Total?")).status == "done"


async def test_the_facts_rule_holds_what_an_answer_states_to_what_the_agent_was_given() -> None:
    """`require_evidence="facts"`: an answer that states only what the task and its context show
    is taken as it is; one with a number or a name nothing showed (nor the expected output the
    task was written with: a planner's guess) is sent back, then partial; found by a tool, the
    same words are done. An executor made to answer from what it knows keeps to that."""
    brief = "Find the boiling point of water.\nExpected output: 212 degrees"
    told = ScriptedModel([reply("It boils at 100 degrees, as given.")])
    given = await Executor(told).run(brief, context="Water boils at 100 degrees.")
    assert given.status == "done"  # no tools: nothing to look with
    told = ScriptedModel([reply("It boils at 100 degrees, as given.")])
    given = await Executor(told, tools=[search]).run(
        brief, context="Water boils at 100 degrees.", require_evidence="facts"
    )
    assert given.status == "done"

    guessed = ScriptedModel([reply("It boils at 212 degrees."), reply("It boils at 212 degrees.")])
    report = await Executor(guessed, tools=[search]).run(brief, require_evidence="facts")
    assert report.status == "partial"
    assert "nothing you were given shows what your answer states (212)" in report.notes[-1]

    looked = ScriptedModel([call("search", query="212"), reply("It boils at 212 degrees.")])
    report = await Executor(looked, tools=[search]).run(brief, require_evidence="facts")
    assert report.status == "done"

    free = ScriptedModel([reply("It boils at 212 degrees.")])
    report = await Executor(free, tools=[search], require_evidence=False).run(
        brief, require_evidence="facts"
    )
    assert report.status == "done"
