"""`create_app`: the FastAPI app serving one agent.

Everything the app uses hangs off one `ServerRuntime` in `app.state.keel`; nothing is
global, so tests build as many apps as they like. The lifespan opens the runtime (agent,
store, engine) and closes it (running turns cancelled, store closed). In-process tests
enter it with `async with app.router.lifespan_context(app): ...`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from keel import __version__
from keel.ids import Clock, IdSource
from keel.observe.tracing import TracingConfig
from keel.server import (
    admin,
    channels_openai,
    channels_responses,
    channels_rest,
    conversations,
    inspector,
    plan_feedback,
    plans_api,
)
from keel.server.channels_socketio import SOCKETIO_PATH, RasaSocketChannel
from keel.server.cors import ApiCors
from keel.server.deps import Runtime
from keel.server.docs_routes import router as docs_router
from keel.server.errors import install_error_handlers
from keel.server.limits import BodyLimit
from keel.server.request_id import RequestId
from keel.server.runtime import EngineFactory, ServerRuntime
from keel.server.settings import ServerSettings
from keel.server.telemetry import attach_telemetry, install_telemetry, server_telemetry
from keel.server.ui import routes as ui_routes
from keel.server.voice import router as voice_router
from keel.server.wire import HealthReply

_DESCRIPTION = (
    "Talk to a Keel agent: the chat API with JSON or server-sent events, approvals and "
    "cancellation, Rasa's REST webhook and socket.io channel, OpenAI-compatible Chat "
    "Completions and Responses endpoints and "
    "admin endpoints (conversations for the Inspector, the plan cache); the web UI is at /ui/chat. "
    "See docs/api.md."
)


def create_app(
    settings: ServerSettings,
    *,
    engine_factory: EngineFactory | None = None,
    clock: Clock | None = None,
    ids: IdSource | None = None,
    tracing: TracingConfig | None = None,
) -> FastAPI:
    """The app for `settings`; `engine_factory`, `clock` and `ids` replace the defaults;
    `tracing` turns span export on (`keel.observe`; metrics are always kept)."""
    runtime = ServerRuntime(settings, engine_factory=engine_factory, clock=clock, ids=ids)
    telemetry = server_telemetry(runtime, tracing)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await runtime.open()
        attach_telemetry(telemetry, runtime)
        try:
            yield
        finally:
            await runtime.close()
            telemetry.close()

    app = FastAPI(
        title="Keel",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served from bundled assets (keel.server.docs_routes)
        redoc_url=None,
    )
    app.state.keel = runtime
    install_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if settings.cors_origins:  # outside the body limit, so a 413 still carries CORS headers
        app.add_middleware(ApiCors, origins=settings.cors_origins)
    install_telemetry(app, telemetry)  # the request span, inside the request id; /metrics
    app.add_middleware(RequestId)  # added last: outermost, so every answer carries the id
    app.include_router(conversations.router)
    app.include_router(channels_rest.router)
    app.include_router(channels_openai.router)
    app.include_router(channels_responses.router)
    app.include_router(admin.router)
    app.include_router(inspector.router)
    app.include_router(plans_api.router)
    app.include_router(plan_feedback.router)
    app.include_router(ui_routes.router)
    app.include_router(voice_router)
    app.include_router(docs_router)
    app.mount(SOCKETIO_PATH, RasaSocketChannel(runtime).asgi_app())
    app.add_api_route(
        "/health", _health, methods=["GET"], response_model=HealthReply, tags=["health"]
    )
    return app


async def _health(runtime: Runtime) -> JSONResponse:
    """Liveness and readiness: answers once the agent is loaded and the store is open."""
    reply: HealthReply = {"status": "ok", "agent": runtime.agent_id}
    return JSONResponse(reply)
