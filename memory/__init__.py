"""What paor remembers: transcripts and their compaction, token counts, long-term facts, and the
durable journal of every run's effects.

```python
from memory import Compactor, SQLiteFactStore, render_facts, user_fact

executor = Executor(model, tools, compactor=Compactor(max_tokens=8000))
async with SQLiteFactStore("facts.db") as facts:
    await facts.put(user_fact("user-1", "budget", "500 EUR", kind="figure"))
    report = await executor.run(task, context=render_facts(await facts.query("user-1")))
```
"""

from memory._compaction import SUMMARY_PREFIX, Compaction, Compactor, Summariser
from memory._facts import (
    Fact,
    FactKind,
    FactStore,
    InMemoryFactStore,
    SQLiteFactStore,
    facts_from_tool_result,
    merge_fact,
    render_facts,
    user_fact,
)
from memory._journal import (
    EffectKind,
    EffectRecord,
    Journal,
    JournalError,
    RunInfo,
    RunLocked,
    RunStatus,
    default_journal_path,
)
from memory._tokens import count_tokens, encoding_for
from memory._transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Transcript,
    TranscriptError,
    UserMessage,
)

__all__ = [
    "SUMMARY_PREFIX",
    "AssistantMessage",
    "Compaction",
    "Compactor",
    "EffectKind",
    "EffectRecord",
    "Fact",
    "FactKind",
    "FactStore",
    "InMemoryFactStore",
    "Journal",
    "JournalError",
    "Message",
    "RunInfo",
    "RunLocked",
    "RunStatus",
    "SQLiteFactStore",
    "Summariser",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "Transcript",
    "TranscriptError",
    "UserMessage",
    "count_tokens",
    "default_journal_path",
    "encoding_for",
    "facts_from_tool_result",
    "merge_fact",
    "render_facts",
    "user_fact",
]
