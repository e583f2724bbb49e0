"""OpenTelemetry for paor (the `otel` extra): spans by the GenAI semantic conventions, sent to the
global tracer provider, and `export_otlp` for an application (or the CLI) that has none.

```python
from agents.telemetry import capture_content, export_otlp

with export_otlp():  # OTEL_EXPORTER_OTLP_ENDPOINT, or http://127.0.0.1:4318
    result = await Orchestrator(model, tools).run(goal)
```
"""

from agents._telemetry import CAPTURE_ENV, TRACER_NAME, OtlpExport, capture_content, export_otlp

__all__ = ["CAPTURE_ENV", "TRACER_NAME", "OtlpExport", "capture_content", "export_otlp"]
