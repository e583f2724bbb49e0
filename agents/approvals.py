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

from agents._approval import ApprovalRequest, Approver, Decide, Decision, approve, deny

__all__ = ["ApprovalRequest", "Approver", "Decide", "Decision", "approve", "deny"]
