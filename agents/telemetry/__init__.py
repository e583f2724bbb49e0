"""paor's logs and traces: OpenTelemetry spans by the GenAI semantic conventions (the `otel`
extra), sent to the global tracer provider, `export_otlp` for an application (or the CLI) that has
none, the library's logger, and the redaction every log and span passes through.

```python
from agents.telemetry import capture_content, export_otlp

with export_otlp():  # OTEL_EXPORTER_OTLP_ENDPOINT, or http://127.0.0.1:4318
    result = await Orchestrator(model, tools).run(goal)
```

For a loop of one's own (the orchestrator's run, plan and synthesis spans are made so):

- `span` opens a paor span and yields its scope, whose `finish` sets the attributes known at
  its end and `fail` marks it failed (both do nothing when tracing is off); what it is given
  as `content` goes on it redacted, only while content is captured; `quiet` makes no span
  inside its block (a Temporal workflow, whose replays would repeat them);
- `logger(name)` is a paor logger: key-value events, silent unless the application configures
  logging;
- `redact_text` masks secrets in free text and in the URLs it holds, with `REDACTED`.
"""

from agents._tracing import REDACTED, logger, redact_text
from agents.telemetry._telemetry import (
    capture_content,
    export_otlp,
    quiet,
    span,
)

__all__ = [
    "REDACTED",
    "capture_content",
    "export_otlp",
    "logger",
    "quiet",
    "redact_text",
    "span",
]
