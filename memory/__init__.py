"""What paor remembers: transcripts and their compaction, token counts, long-term facts, and the
durable journal of every run's effects.

```python
from memory import Compactor, SQLiteFactStore
from memory.facts import Fact

executor = Executor(model, tools, compactor=Compactor(max_tokens=8000))
async with SQLiteFactStore("facts.db") as facts:
    await facts.put(Fact.from_user("user-1", "budget", "500 EUR", kind="figure"))
    report = await executor.run(task, context=Fact.render(await facts.query("user-1")))
```

Beyond the front door: `memory.journal` (records, run listings, `JournalError`, `RunLocked`),
`memory.facts` (facts and how they merge and render), `memory.compaction` (its result, the
summariser, token counts, `TranscriptError`). Every error derives from `PaorError`, the root of
the tree drawn in `agents.errors` (defined here, in the bottom layer, and imported from there).
"""

from memory._compaction import Compactor
from memory._facts import FactStore, InMemoryFactStore, SQLiteFactStore
from memory._journal import Journal
from memory._transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Transcript,
    UserMessage,
)

__all__ = [
    "AssistantMessage",
    "Compactor",
    "FactStore",
    "InMemoryFactStore",
    "Journal",
    "Message",
    "SQLiteFactStore",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "Transcript",
    "UserMessage",
]
