"""A real OTLP/HTTP trace endpoint on loopback, for the tracing tests and ``ragway bench``.

The services export with the SDK's ``http/protobuf`` exporter (ragway/telemetry.py)
to ``OTEL_EXPORTER_OTLP_ENDPOINT``; this server answers ``POST /v1/traces`` as a
collector does (protobuf ``ExportTraceServiceRequest`` in, ``ExportTraceServiceResponse``
out, gzip or not) and keeps what it received, so a test can read the spans of
every process back without a collector, and a benchmark can pay the real cost of
exporting over a socket.

    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        ...
        receiver.spans()   # every span received so far, decoded
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

# A request larger than this is refused (413): an exporter batch is far smaller.
MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    name: str
    service: str  # the resource's service.name
    trace_id: str  # hex, as trace backends show it
    span_id: str
    parent_id: str  # "" for a root span
    kind: int  # the OTLP SpanKind number (1 internal, 2 server, 3 client, ...)
    attributes: dict[str, Any] = field(default_factory=dict)
    start_ns: int = 0  # unix nanoseconds
    end_ns: int = 0

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    if which == "kvlist_value":
        return _attributes(v.kvlist_value.values)
    return getattr(v, which) if which else None


def _attributes(values: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kv: KeyValue
    for kv in values:
        out[kv.key] = _value(kv.value)
    return out


class OtlpReceiver:
    """A ThreadingHTTPServer on a free loopback port; ``keep=False`` only counts spans."""

    def __init__(self, host: str = "127.0.0.1", *, keep: bool = True) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self.span_count = 0
        self.requests = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the http.server API names it
                if self.path.rstrip("/") != "/v1/traces":
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self.send_error(413)
                    return
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                try:
                    request.ParseFromString(body)
                except Exception:  # a DecodeError: the exporter sent no protobuf
                    self.send_error(400)
                    return
                receiver._take(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # one line per export batch on stderr helps no one

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="otlp-receiver", daemon=True
        )

    @property
    def endpoint(self) -> str:
        """The value for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the exporter adds /v1/traces)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    def _take(self, request: ExportTraceServiceRequest) -> None:
        received: list[ReceivedSpan] = []
        count = 0
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            service = str(resource.get("service.name", ""))
            for scope_spans in resource_spans.scope_spans:
                count += len(scope_spans.spans)
                if not self._keep:
                    continue
                for s in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            name=s.name,
                            service=service,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(),
                            kind=int(s.kind),
                            attributes=_attributes(s.attributes),
                            start_ns=int(s.start_time_unix_nano),
                            end_ns=int(s.end_time_unix_nano),
                        )
                    )
        with self._lock:
            self.requests += 1
            self.span_count += count
            self._spans.extend(received)
