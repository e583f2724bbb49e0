"""`RunConfig`: what a run is, as data; `RunOptions`: what a single run is given besides.

A run's configuration is one frozen, serialisable object: the Orchestrator holds one, a run may be
given another, the journal records the one each run started with, and a run on Temporal takes it
as its input. Adding an option is a field here plus the code that reads it. Collaborators that are
not data (the approver, the effect boundary) and event options belong to one run, and are passed
to `Orchestrator.stream`, `run`, `resume` and `replay` (`RunOptions`).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from agents import ConfigurationError
from agents.approvals import Approver, Decide
from agents.effects import Effects
from agents.executor import DEFAULT_INSTRUCTIONS, FirstLook
from orchestrator._limits import Limits
from orchestrator._prompts import PLANNER_INSTRUCTIONS
from orchestrator._synthesis import RESULT_CHARS, SYNTHESIS_INSTRUCTIONS

__all__ = ["RunConfig", "RunOptions"]


class RunConfig(BaseModel):
    """How a run plans, acts and answers: the same data live, journaled and on Temporal.

    ```python
    config = RunConfig(limits=Limits(deadline_s=120), cite=True)
    orch = Orchestrator(model, tools, config=config)
    await orch.run("goal", config=config.model_copy(update={"scope": "alice"}))  # one run's own
    ```

    Attributes:
        limits: The run's budget and exits.
        instructions: The sub-agents' system prompt.
        planner_instructions: The planner's system prompt (`{max_subtasks}` is filled in).
        synthesis_instructions: The final writer's system prompt.
        on_plan_failure: When no valid plan can be made: "fail" ends the run "failed" with the
            planner's problems as its reason, "single" runs the goal as one subtask (noted in
            `RunResult.notes`). Either way the run returns; it never raises for its own failure.
        scope: The user or session whose long-term facts apply (with a fact store).
        first_look: A tool call every sub-agent makes before its first decision, with its
            subtask's question (`FirstLook(tool="search_docs", argument="query")`): small
            models decide better from evidence than from a blank page. "tools" (the
            default): the first look a tool offers (`@tool(first_look=...)`: the corpus's
            `search_docs` does), if any; None: none (what a run journaled before "tools"
            existed recorded, and so replays).
        cite: Sub-agents' answers, and the run's, cite the sources they gathered and must say
            what those sources say, else they are partial (see `agents.Executor`). None (the
            default): when a tool declares its sources (`evidence=`: the corpus tools, your own
            hook), as only then is there a passage to hold an answer to; a run over tools with
            no sources (a calculator, an API) is not held to passages.
        ask_goal: Every first plan asks the goal itself: a subtask for it is put first when the
            planner left it out (the last subtask making room), and subtasks of one or two words
            are dropped, so a plan that strays still answers the question.
        direct_questions: A goal that is one short question for one fact (how many, how
            long, when, where, who, which, what the something is; one sentence, at most 30
            words, not in parts, not a comparison, not about two named things) is its own
            one-subtask plan, made without a planning call; any other goal goes to the planner.
            Under `review` the person still sees that plan, and a rejection sends the goal to
            the planner. On by default: such a question needs no plan, and a small planner
            splits it into rewordings that compete for one model (`False`: every goal is
            planned).
        review: Plans the run's approver reviews before they run: the "first" plan, or "every"
            version (each replan's too). A person may approve a plan, edit it (validated like
            the planner's) or reject it with feedback the planner reads.
        questions: How many clarifying questions a run may ask the user, its planner's and its
            sub-agents' together (the run's approver answers them).
        direct_calls: The planner may write a subtask out as one tool call (`Subtask.call`),
            which then runs without a sub-agent's model calls (LLMCompiler's tasks), or write out
            the tool call a subtask starts with (`Subtask.first_call`), made as its sub-agent's
            first turn without a model decision.
        typed_subtasks: The planner may give a subtask an output schema (a JSON Schema,
            `Subtask.output_schema`): its sub-agent's result is then also an object of it,
            validated, and the subtasks that depend on it receive that object as JSON data.
        stream_plans: Stream the first plan, and start each subtask with no dependencies as
            soon as the planner has written it (LLMCompiler's trick; the planner is told so, and
            asked to write first the ones that begin the longest chains), and each written after
            all it depends on as soon as those have ended done or partial with nothing to
            replan, if the plan is still coming; the plan is still validated whole, and an early
            start the final plan does not keep, or that read the result of one, is stopped. None
            (the default): on where it is safe, when the planner is a hosted endpoint (an
            `OpenAIChatModel` that is not `local`); off for a server on this machine, where
            early sub-agents would wait on the planner's slot, and for models of one's own.
            Live runs only (not journaled, nor on Temporal). A streamed reply's events, many
            times its text, count against the model's `max_response_bytes` (8 MiB): a plan of
            thousands of subtasks can pass it (the run then ends failed, saying so); turn
            streaming off for such plans, or raise the bound.
        pass_results: A sub-agent whose subtask only gathers (no answer shape or check asked,
            not the goal itself) and whose result no other subtask reads may end with its tool
            results as its answer: it calls the built-in `answer_with_results` tool with its
            last calls, and the writer reads the results themselves instead of a closing
            answer that restates them (one serial model call less per such subtask). The
            results must fit `result_chars`, its last calls must all have succeeded, and what
            the task asks must be in them; otherwise it writes its answer, as it would have.
            Not in cited runs. None (the default): on for a hosted endpoint; off for a server
            on this machine, where every prompt token costs the model time and the small
            models tried seldom call the tool (see the evaluations page). A run records the
            value it took (`RunInfo.config`), so a replay offers what the run offered.
        result_chars: The most characters of one subtask's result that the sub-agents depending
            on it and the final writer read (None: the whole result). The cut keeps a small
            model's prompt short; lift it when results are long and the model's window is not
            (each tool's own `max_chars` bounds what a sub-agent reads of a tool result).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    limits: Limits = Limits()
    instructions: str = DEFAULT_INSTRUCTIONS
    planner_instructions: str = PLANNER_INSTRUCTIONS
    synthesis_instructions: str = SYNTHESIS_INSTRUCTIONS
    on_plan_failure: Literal["fail", "single"] = "fail"
    scope: str = Field(default="default", min_length=1)
    first_look: FirstLook | Literal["tools"] | None = "tools"
    cite: bool | None = None
    ask_goal: bool = False
    direct_questions: bool = True
    review: Literal["first", "every"] | None = None
    questions: int = Field(default=0, ge=0)
    direct_calls: bool = False
    typed_subtasks: bool = False
    stream_plans: bool | None = None
    pass_results: bool | None = None
    result_chars: int | None = Field(default=RESULT_CHARS, ge=100)

    def check(self, approver: Approver | None) -> None:
        """Whether a run under this configuration can go with `approver`.

        Raises:
            ConfigurationError: `review` or `questions` without an approver to ask.
        """
        if self.review is not None and approver is None:
            raise ConfigurationError("review needs an approver= to ask (see agents.approvals)")
        if self.questions and approver is None:
            raise ConfigurationError("questions need an approver= to answer them")


class RunOptions(TypedDict, total=False):
    """What one run is given besides its goal (all optional).

    Attributes:
        config: This run's configuration (default: the Orchestrator's).
        approver: Decides on the calls of tools that need approval, for every sub-agent, on the
            plans under `review`, and answers the run's questions (see `agents.approvals`); a
            call approved "always" is so for the rest of the run. With
            `agents.approvals.PAUSE` the caller decides while the run streams
            (`RunStream.decide`), and a journaled run pauses once nothing but approvals is left:
            it ends "paused", and `resume(run_id, decisions=...)` goes on.
        effects: The effect boundary the run reaches the world through (live by default; the
            journal and Temporal wrap or replace it).
        keep_events: Keep every event in `RunResult.events` (default True).
    """

    config: RunConfig
    approver: Approver | Decide | None
    effects: Effects
    keep_events: bool
