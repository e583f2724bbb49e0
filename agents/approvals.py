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

For a loop of one's own (the orchestrator's is one), the machinery underneath is one object,
`RunWaits`: a run's open approvals, the decisions given to it, and its clock.
`RunWaits.shared()` shares one with every sub-agent started inside its block;
`waits.decided(...)` is the decision on an approval as a recorded choice (asked live, served on
replay); `waits.ask(...)` is the answer to a question (`ApprovalRequest.question(...)`), a
recorded choice too, refused (`RunWaits.NONE_LEFT`) once the run has asked all it may.
"""

from agents._approval import PAUSE, ApprovalRequest, Approver, Decide, Decision
from agents._waits import RunWaits

__all__ = [
    "PAUSE",
    "ApprovalRequest",
    "Approver",
    "Decide",
    "Decision",
    "RunWaits",
]
