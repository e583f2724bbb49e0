"""Tool calls a person approves first (see `Executor(approver=...)`, `@tool(needs_approval=...)`).

```python
from agents.approvals import ApprovalRequest, Decision, approve, deny


async def ask_a_person(request: ApprovalRequest) -> Decision:
    if request.args.get("amount", 0) > 1000:
        return deny("transfers over 1000 need a second signature")
    return approve()


orch = Orchestrator(model, [transfer], approver=ask_a_person)
```
"""

from agents._approval import (
    PAUSE,
    ApprovalRequest,
    Approver,
    Decide,
    Decision,
    answer,
    approve,
    deny,
    edit,
    reject,
)

__all__ = [
    "PAUSE",
    "ApprovalRequest",
    "Approver",
    "Decide",
    "Decision",
    "answer",
    "approve",
    "deny",
    "edit",
    "reject",
]
