"""The server's per-request path stays lean: what a turn over HTTP must not pay for.

* No API route solves a dependency in a worker thread (FastAPI runs a plain function
  dependency in the thread pool: a thread hop per dependency per request).
* A kept-alive connection's read timeout moves one pending timer instead of scheduling a
  new timer for every request (the event loop's timer heap stays small).
* A run is one task that reports its outcome however the engine call ended (cancelled
  before it started, while it ran, or after it returned).
"""

from __future__ import annotations

import asyncio
import inspect
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.security.base import SecurityBase
from server_kit import ServeFactory
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from keel.events.fold import ConversationState
from keel.loop.observer import TurnObserver
from keel.loop.result import TurnResult
from keel.server.http_protocol import TimedH11Protocol
from keel.server.runs import TurnRun
from keel.stores.factory import open_store


def _calls(dependant: Dependant) -> Iterator[object]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)


def _runs_on_the_loop(call: object) -> bool:
    if isinstance(call, SecurityBase):  # the key headers: coroutine __call__ methods
        return inspect.iscoroutinefunction(type(call).__call__)
    return inspect.iscoroutinefunction(call)


async def test_no_api_route_solves_a_dependency_in_a_thread(serve: ServeFactory) -> None:
    async with serve() as served:
        routes = [c.route for c in iter_route_contexts(served.app.routes)]
        api = [
            r
            for r in routes
            if isinstance(r, APIRoute) and r.path.startswith(("/v1/", "/webhooks/"))
        ]
        assert len(api) > 10
        threaded = {
            f"{sorted(route.methods)[0]} {route.path}: {getattr(call, '__qualname__', call)}"
            for route in api
            for call in _calls(route.dependant)
            if not _runs_on_the_loop(call)
        }
        assert not threaded


async def _hello(_request: object) -> PlainTextResponse:
    return PlainTextResponse("hello")


async def test_a_kept_alive_connection_keeps_one_read_timer(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    timers: list[object] = []
    call_at = loop.call_at

    def counting_call_at(
        when: float, callback: Callable[..., object], *args: Any, **options: Any
    ) -> Any:
        # Keel's own timers, not uvicorn's (its keep-alive timer is one per response).
        if getattr(callback, "__qualname__", "").startswith(f"{TimedH11Protocol.__name__}."):
            timers.append(callback)
        return call_at(when, callback, *args, **options)

    app = Starlette(routes=[Route("/", _hello)])
    config = uvicorn.Config(app, http=TimedH11Protocol, log_level="error", lifespan="off")
    server = uvicorn.Server(config)
    # A socket listening already: the client's connection waits in its backlog until
    # the server accepts it.
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        loop.call_at = counting_call_at  # type: ignore[method-assign]
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as client:
            for _ in range(40):
                assert (await client.get("/")).text == "hello"
    finally:
        loop.call_at = call_at  # type: ignore[method-assign]
        server.should_exit = True
        await serving
        listening.close()
    # The connection's first timer is still pending (15 s): nothing was scheduled after it.
    assert len(timers) == 1


def _result() -> TurnResult:
    return TurnResult(bot_messages=(), stop_reason="end_turn", events=(), state=ConversationState())


async def test_a_run_cancelled_while_its_call_awaits_reports_cancelled(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    entered, never = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    async def call(_observer: TurnObserver) -> TurnResult:
        entered.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            await store.read("k")  # recording the cancellation awaits as the engine does
            seen.append("recorded")
            raise
        return _result()

    try:
        run = TurnRun(key="k", store=store, call=call)
        await entered.wait()
        assert run.cancel()
        outcome = await run.wait()
        assert outcome.cancelled and outcome.failure is None
        assert seen == ["cancelled", "recorded"]
        assert not run.task.cancelled() and run.task.result() is outcome
        assert not run.cancel()  # ended
    finally:
        await store.close()


async def test_a_run_cancelled_before_its_first_step_never_calls(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    called: list[bool] = []

    async def call(_observer: TurnObserver) -> TurnResult:
        called.append(True)
        return _result()

    try:
        run = TurnRun(key="k", store=store, call=call)
        assert run.cancel()
        assert not run.cancel()
        outcome = await run.wait()
        assert outcome.cancelled and not called
        assert run.feed.finished
    finally:
        await store.close()


async def test_a_run_whose_call_returned_cannot_be_cancelled(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'runs.db'}")

    async def call(_observer: TurnObserver) -> TurnResult:
        return _result()

    try:
        run = TurnRun(key="k", store=store, call=call)
        outcome = await run.wait()
        assert not outcome.cancelled and outcome.failure is None
        assert not run.cancel()
    finally:
        await store.close()
