"""What paor tells the planner model: its instructions, and the parts a run's options add.

The research command's own prompts live with it (`orchestrator._research`); the final writer's
with the synthesis (`orchestrator._synthesis`).
"""

__all__ = ["CHAINS_FIRST", "DIRECT_CALLS", "MAY_ASK", "PLANNER_INSTRUCTIONS", "TYPED", "rejected"]

PLANNER_INSTRUCTIONS = (
    "You are the planner of a team of research and action agents. Split the goal into a few "
    "subtasks (at most {max_subtasks}) that agents can do independently; give each a short id, a "
    "self-contained goal, the ids it depends on (only when it truly needs their results, so that "
    "the rest run in parallel), the tools it may use (empty for all), what a good result contains, "
    "and the expected output. Reply with JSON only."
)
"""The planner's system prompt (`{max_subtasks}` is filled in)."""
DIRECT_CALLS = (
    "A subtask that is exactly one tool call whose arguments you already know needs no agent: "
    'write the call in "call" ({"tool": name, "arguments": {...}}) and it runs as it is, its '
    'result being the tool\'s output. An argument written "$ID" is replaced by the result of '
    'subtask ID, which it must depend on. Leave "call" out wherever a step needs reasoning; '
    'if you know such a subtask\'s first tool call, write it in "first_call" the same way: its '
    "agent starts from its result."
)
"""With `direct_calls`: a subtask may be one tool call, or start with one, written out."""
CHAINS_FIRST = (
    "Each subtask that needs no other starts as soon as you have written it: write first the "
    "ones that begin the longest chains of steps."
)
"""With the first plan streamed (`RunConfig.stream_plans`): the longest chains start first."""
TYPED = (
    "When a subtask's result is data that later subtasks use (a price, a date, a list of items), "
    'give it an "output_schema": a small JSON Schema object of the fields, e.g. {"type": '
    '"object", "properties": {"price_eur": {"type": "number"}}, "required": ["price_eur"]}. '
    "Its dependents then receive the result as that JSON. Leave it out for prose results."
)
"""With `typed_subtasks`: a subtask may declare the data its result is."""
MAY_ASK = (
    "Only if the goal lacks something only the user can tell you, without which the plan would "
    'be wrong (a budget, a city, a date), also write one short question in "question": you will '
    "plan again with the answer. Otherwise leave it out."
)
"""With `questions`: the planner may ask the user one question instead of planning."""


def rejected(feedback: str) -> str:
    """What a person said of the last plan they rejected, for the prompt ("" if nothing)."""
    said = f"\n\nA person rejected your last plan. Their feedback: {feedback}\nPlan again with it."
    return said if feedback else ""
