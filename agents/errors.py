"""The error tree: every error paor raises to a caller, split by who must act.

```
PaorError                     every error paor raises on purpose: catch it to catch them all
├── ConfigurationError        the API was misused at construction: fix the code
├── RunError                  a run could not go on: retry later, or change the setup
│   ├── ModelError            the model endpoint failed; its kind says whether a retry can help
│   │   ├── ModelRetryableError   429, 5xx, timeouts, dropped connections: retried, then raised
│   │   ├── ModelRequestError     400, 401, 403, 404, a page not the API: fix request, key or URL
│   │   └── MalformedResponse     a reply that could not be parsed: fed back to the model first
│   ├── PlanError             no valid plan after the repairs: a stronger model, or a clearer goal
│   ├── ReplayDrift           a replay asked for another effect than the one recorded: code changed
│   ├── OutputLocked          another batch writes the output file: wait, or write elsewhere
│   └── BlobError             a Temporal payload's blob is missing or corrupt, or has no store
├── JournalError              a damaged or locked journal, a full disk, an unknown or ended run
│   └── RunLocked             another live process holds the run's lease: wait, or stop it
├── TranscriptError           a tool call without exactly one result: fix what built the history
├── ToolFailure               raised by a tool: the model reads the message and works around it
└── ReplayedCancellation      a signal to the loops: the effect was cut short when recorded
```

Import the root from `agents` (it is defined in memory, the bottom layer, so that every layer
can derive from it) and the run failures of `agents` from here; the others live with their
concept:

```
agents                  PaorError, ConfigurationError, ToolFailure
memory.journal          JournalError, RunLocked
memory.compaction       TranscriptError
orchestrator.plans      PlanError
orchestrator.batch      OutputLocked
orchestrator.temporal   BlobError
```

Loops never let a `RunError` lose work: an executor turns it into a partial or failed report.
`ToolFailure` is the one error meant to be raised by user code; its message reaches the model.
`ReplayedCancellation` is public only so that the orchestrator's loops can catch it too.
"""

from agents._errors import (
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
    ReplayDrift,
    ReplayedCancellation,
    RunError,
)

__all__ = [
    "MalformedResponse",
    "ModelError",
    "ModelRequestError",
    "ModelRetryableError",
    "ReplayDrift",
    "ReplayedCancellation",
    "RunError",
]
