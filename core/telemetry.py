"""Process-wide telemetry: where traces go (OTLP) and where the worker's SDK metrics are served.

Both are off unless configured: ``SNG_OTLP_ENDPOINT`` (an OTLP/HTTP traces URL) installs a
global tracer provider that the Temporal tracing interceptor (see ``core.temporal``) writes to;
``SNG_WORKER_METRICS_ADDRESS`` ("host:port") makes the worker's Temporal runtime serve its SDK
metrics for Prometheus at ``http://host:port/metrics``.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from core.settings import Settings

_installed: TracerProvider | None = None


def configure_tracing(settings: Settings) -> TracerProvider | None:
    """Install the OTLP-exporting tracer provider once per process, if an endpoint is set.

    OpenTelemetry allows one global provider per process; the API and the worker each call
    this through ``connect``, and a second call is a no-op.
    """
    global _installed
    if not settings.otlp_endpoint or _installed is not None:
        return _installed
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.otel_service_name}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint))
    )
    trace.set_tracer_provider(provider)
    _installed = provider
    return provider


def worker_runtime(settings: Settings) -> Runtime | None:
    """A Temporal runtime serving SDK metrics for Prometheus, or None to keep the default."""
    if not settings.worker_metrics_address:
        return None
    return Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=settings.worker_metrics_address)
        )
    )
