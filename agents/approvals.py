"""Tool calls a person approves first (see `Executor(approver=...)`, `@tool(needs_approval=...)`),
and the questions a run asks a person (`questions=N`).

```python
from agents.approvals import ApprovalRequest, Decision


async def ask_a_person(request: ApprovalRequest) -> Decision:
    if request.args.get("amount", 0) > 1000:
        return Decision.deny("transfers over 1000 need a second signature")
    return Decision.approve()


result = await Orchestrator(model, [transfer]).run(goal, approver=ask_a_person)
```

For a loop of one's own (the orchestrator's is one), the machinery underneath:

- `RunWaits`: a run's open approvals (each a `Pending`), the decisions given to it, and its clock;
  `run_waits` shares one with every sub-agent started inside its block;
- `decided`: the decision on an approval, as a recorded choice (asked live, served on replay);
- `question_request` and `ask`: a question to the user and its answer, a recorded choice too,
  refused with `NONE_LEFT` once the run has asked all the questions it may.
"""

from agents._approval import (
    PAUSE,
    ApprovalRequest,
    Approver,
    Decide,
    Decision,
    decided,
)
from agents._signals import NONE_LEFT, ask, question_request
from agents._waits import Pending, RunWaits, run_waits

__all__ = [
    "NONE_LEFT",
    "PAUSE",
    "ApprovalRequest",
    "Approver",
    "Decide",
    "Decision",
    "Pending",
    "RunWaits",
    "ask",
    "decided",
    "question_request",
    "run_waits",
]
