"""The server's side of telemetry: the request span, the run taps, and `GET /metrics`.

`install_telemetry(app, telemetry)` adds the request-span middleware (which does nothing
while tracing is off) and the `/metrics` route (scope `admin`, Prometheus' text format);
`attach_telemetry` (from the lifespan, once the agent is loaded) starts tracing when it is
configured and adds a tap to every run, whose spans hang under the request's span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import Response
from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.context import Context
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keel.observe import otlp
from keel.observe.metrics import METRICS_CONTENT_TYPE
from keel.observe.providers import provider_lookup
from keel.observe.tap import Telemetry, TurnTap
from keel.observe.tracing import ServerSpan, TracingConfig
from keel.server.deps import AdminKey
from keel.server.errors import ERROR_RESPONSES
from keel.server.feed import RunOutcome
from keel.server.runtime import ServerNotReady, ServerRuntime

if TYPE_CHECKING:
    from keel.server.run_taps import RunTap

router = APIRouter(tags=["admin"], responses=ERROR_RESPONSES)


def _telemetry(request: Request) -> Telemetry:
    telemetry: Telemetry = request.app.state.telemetry
    return telemetry


TelemetryDep = Annotated[Telemetry, Depends(_telemetry)]


class _ServerTap(TurnTap):
    """A `TurnTap` as a run tap (no wrapper: the engine awaits it once per event); the
    run's outcome says whether it failed."""

    def finished(self, outcome: RunOutcome) -> None:
        self.finish(failed=outcome.failure is not None)


def server_telemetry(runtime: ServerRuntime, tracing: TracingConfig | None) -> Telemetry:
    """The app's telemetry: metrics, and tracing when `tracing` is given."""

    def running() -> int:
        try:
            return sum(1 for _ in runtime.runs)
        except ServerNotReady:
            return 0

    return Telemetry(clock=runtime.clock, tracing=tracing, in_progress=running)


def attach_telemetry(telemetry: Telemetry, runtime: ServerRuntime) -> None:
    """Start tracing for the opened runtime's agent and tap every run from now on."""
    telemetry.open(agent=runtime.agent_id, provider_of=provider_lookup(runtime.definition))

    def tap(key: str) -> RunTap:
        return _ServerTap(telemetry, key, otel_context.get_current())

    runtime.runs.taps.append(tap)


_ROOT: Final = Context()
"""The context a request without trace headers starts from (as `propagate.extract`'s)."""


def _parent_context(scope: Scope, fields: frozenset[bytes]) -> Context:
    """The trace context the request's headers carry (W3C `traceparent`, baggage, or what
    `OTEL_PROPAGATORS` names): the propagators run only when one of their headers is there."""
    carried = {
        k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ()) if k in fields
    }
    return propagate.extract(carried) if carried else _ROOT


class TraceRequests:
    """ASGI middleware: a server span per HTTP request, the parent of its turns' spans.

    The incoming `traceparent` (W3C trace context) is continued. The span is named
    `{method} {route}` once the route is known (`{method}` for unmatched paths).
    """

    def __init__(self, app: ASGIApp, *, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry
        self._fields: frozenset[bytes] | None = None
        """The headers the global propagators read (lower case), read at the first request."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracing = self.telemetry.tracing
        if scope["type"] != "http" or tracing is None:
            await self.app(scope, receive, send)
            return
        seconds = self.telemetry.seconds
        method = scope.get("method", "GET")
        fields = self._fields
        if fields is None:
            fields = frozenset(
                f.lower().encode("latin-1") for f in propagate.get_global_textmap().fields
            )
            self._fields = fields
        span = ServerSpan(
            tracing,
            method,
            _parent_context(scope, fields),
            start_ns=int(seconds() * 1e9),
            attributes={
                "http.request.method": method,
                "url.path": scope.get("path", ""),
                "url.scheme": scope.get("scheme", "http"),
                "network.protocol.version": scope.get("http_version", "1.1"),
            },
        )
        status: list[int] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
                span.attributes["http.response.status_code"] = status[0]
            await send(message)

        token = otel_context.attach(span.context)
        try:
            await self.app(scope, receive, sending)
        except BaseException as exc:
            span.attributes["error.type"] = type(exc).__qualname__
            span.error = type(exc).__name__
            described = {"exception.type": type(exc).__qualname__, "exception.message": str(exc)}
            at = int(seconds() * 1e9)
            span.events.append(otlp.event("exception", at, described))
            raise
        finally:
            otel_context.detach(token)
            route = getattr(scope.get("route"), "path", None)
            if isinstance(route, str):
                span.attributes["http.route"] = route
                span.name = f"{method} {route}"
            if status and status[0] >= 500 and span.error is None:
                span.error = ""
            span.end(int(seconds() * 1e9))


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {METRICS_CONTENT_TYPE: {}}, "description": "The metrics."}},
)
async def metrics(_principal: AdminKey, telemetry: TelemetryDep) -> Response:
    """Prometheus metrics of this process (text exposition format); scope `admin`."""
    return Response(telemetry.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


def install_telemetry(app: FastAPI, telemetry: Telemetry) -> None:
    """Add the request-span middleware and the `/metrics` route to `app`."""
    app.state.telemetry = telemetry
    app.add_middleware(TraceRequests, telemetry=telemetry)
    app.include_router(router)
