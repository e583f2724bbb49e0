"""`export_otlp`: spans sent over OTLP/HTTP through the global tracer provider, for an application
(or the CLI) that has no OpenTelemetry set-up of its own.

Closing is bounded (`CLOSE_TIMEOUT`, 5 s): a collector that accepts connections and never answers
would otherwise hold the process after the run for the SDK's own waits (10 s an export, 30 s a
flush and a shutdown, per batch). What is not sent by then is dropped, with a warning naming the
endpoint.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agents._tracing import logger, redact_url

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["CLOSE_TIMEOUT", "OtlpExport", "export_otlp"]

CLOSE_TIMEOUT = 5.0
"""Seconds an `OtlpExport` waits, by default, for its last spans to go when it closes."""

_log = logger()


class OtlpExport:
    """paor's spans (and any other library's) sent over OTLP/HTTP until `close()`.

    Use it as a context manager, or call `close()` on exit: it flushes what is buffered, for
    `close_timeout_s` at most (a collector that accepts connections and never answers would
    otherwise hold the process for the SDK's 30 s flush and shutdown, per batch).

    Attributes:
        provider: The SDK tracer provider spans go through.
        endpoint: Where spans go (credentials masked), for messages.
        close_timeout_s: Seconds `close` waits for the flush and shutdown.
    """

    def __init__(
        self,
        provider: TracerProvider,
        *,
        owned: bool,
        processor: Any,
        endpoint: str = "",
        close_timeout_s: float = CLOSE_TIMEOUT,
    ) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self.close_timeout_s = close_timeout_s
        self._owned = owned
        self._processor = processor

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Send what is buffered now; whether it all went within `timeout_s`."""
        return _within(timeout_s, lambda: bool(self._processor.force_flush(int(timeout_s * 1000))))

    def close(self) -> None:
        """Flush and stop exporting (the provider too, when this made it), within
        `close_timeout_s`; what is not sent by then is dropped, with a warning."""
        # The processor's shutdown exports what is buffered first, and sets its flag at once:
        # the provider's exit handler then has nothing to wait for.
        stop = self.provider.shutdown if self._owned else self._processor.shutdown
        if not _within(self.close_timeout_s, stop):
            _log.warning(
                "otlp_export_unfinished", endpoint=self.endpoint, waited_s=self.close_timeout_s
            )

    def __enter__(self) -> OtlpExport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _within(seconds: float, work: Callable[[], object]) -> bool:
    """Run `work` (a blocking SDK call) in a daemon thread; whether it ended within `seconds`.

    The SDK's own bounds are not kept (its flush ignores the timeout it is given; its shutdown
    waits 30 s for an export in flight), so the wait is bounded here. A thread left behind is a
    daemon: it does not hold the process at exit. Its errors are logged, not raised.
    """

    def run() -> None:
        try:
            work()
        except Exception as exc:
            _log.warning("otlp_export_failed", error=str(exc)[:300])

    thread = threading.Thread(target=run, name="paor-otlp", daemon=True)
    thread.start()
    thread.join(max(seconds, 0.0))
    return not thread.is_alive()


def export_otlp(
    endpoint: str | None = None,
    *,
    service_name: str | None = None,
    close_timeout_s: float = CLOSE_TIMEOUT,
) -> OtlpExport:
    """Send spans to an OTLP/HTTP collector, through the global tracer provider.

    Sets an SDK `TracerProvider` with a `BatchSpanProcessor` as the global one, or adds the
    processor to the SDK provider the application already set. The standard variables apply:
    `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`,
    `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`.

    Args:
        endpoint: The collector's base URL ("http://127.0.0.1:4318"; `/v1/traces` is added).
            None: from the environment (the OTLP default, 127.0.0.1:4318, without it).
        service_name: The `service.name` resource attribute (default: `OTEL_SERVICE_NAME`, else
            "paor").
        close_timeout_s: Seconds closing waits for the last spans to go (5 s): a collector that
            never answers costs no more than that after the run.

    Raises:
        ConfigurationError: The `otel` extra is not installed.
    """
    from agents._errors import ConfigurationError

    try:
        from opentelemetry import trace as otel
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigurationError(
            "exporting traces needs the otel extra: pip install 'paor[otel]'"
        ) from exc
    url = None if endpoint is None else endpoint.rstrip("/") + "/v1/traces"
    processor = BatchSpanProcessor(OTLPSpanExporter(endpoint=url))
    current = otel.get_tracer_provider()
    name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "paor"
    provider = (
        current
        if isinstance(current, TracerProvider)
        else TracerProvider(resource=Resource.create({"service.name": name}))
    )
    provider.add_span_processor(processor)
    if provider is not current:
        otel.set_tracer_provider(provider)
    return OtlpExport(
        provider,
        owned=provider is not current,
        processor=processor,
        endpoint=_shown_endpoint(url),
        close_timeout_s=close_timeout_s,
    )


def _shown_endpoint(url: str | None) -> str:
    """Where the exporter sends spans, as the OTLP variables say (credentials masked)."""
    env = os.environ.get
    base = env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318").rstrip("/") + "/v1/traces"
    return redact_url(url or env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or base)
