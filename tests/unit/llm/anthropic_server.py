"""A local HTTP server that speaks the Anthropic Messages wire format, for adapter tests.

    with serve() as server:
        server.reply_json(message_body([text_block("hi")]))
        model = AnthropicModel(model="claude-test", api_key="sk-test", base_url=server.base_url)
        ...
        assert server.requests[0].body["model"] == "claude-test"

Replies are scripted in order (`reply_json`, `reply_error`, `reply_stream`, `reply_hang`);
every request is recorded with its path, headers and parsed JSON body. The server is the
stdlib `ThreadingHTTPServer` on 127.0.0.1, port 0, in a background thread. A hanging reply
blocks on a `threading.Event` until the `serve()` block ends, so a client timeout can be
observed without the test sleeping. Streams are SSE: an `event:` line and a `data:` line
per event, as the Messages API sends them.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names are lower-cased."""
    body: Any


@dataclass(frozen=True, kw_only=True, slots=True)
class _Reply:
    kind: str  # "json", "stream" or "hang"
    status: int = 200
    payload: Any = None


class FakeAnthropicServer:
    """The scripted state shared by the request handler threads."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.release = threading.Event()
        self.base_url = ""
        self._replies: deque[_Reply] = deque()
        self._lock = threading.Lock()

    def reply_json(self, body: Mapping[str, Any], *, status: int = 200) -> None:
        """Answer the next request with this JSON body."""
        self._push(_Reply(kind="json", status=status, payload=body))

    def reply_error(self, status: int, error_type: str, message: str) -> None:
        """Answer the next request with an Anthropic error body."""
        self.reply_json(error_body(error_type, message), status=status)

    def reply_stream(
        self, events: Sequence[tuple[str, Mapping[str, Any]]], *, stall: bool = False
    ) -> None:
        """Answer the next request with these SSE `(event, data)` pairs; `stall` then holds
        the stream open, unfinished, until the server stops."""
        self._push(_Reply(kind="stream", payload=(tuple(events), stall)))

    def reply_hang(self) -> None:
        """Hold the next request open, unanswered, until the server stops."""
        self._push(_Reply(kind="hang"))

    def bodies(self) -> list[Any]:
        """The JSON bodies received so far."""
        with self._lock:
            return [request.body for request in self.requests]

    def _push(self, reply: _Reply) -> None:
        with self._lock:
            self._replies.append(reply)

    def _take(self, request: RecordedRequest) -> _Reply | None:
        with self._lock:
            self.requests.append(request)
            return self._replies.popleft() if self._replies else None


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        headers = {name.lower(): value for name, value in self.headers.items()}
        body = json.loads(raw) if raw else None
        record = RecordedRequest(method="POST", path=self.path, headers=headers, body=body)
        reply = self.server.fake._take(record)
        if reply is None:
            self._send_json(500, error_body("api_error", "fake server: no reply scripted"))
        elif reply.kind == "hang":
            self.server.fake.release.wait(timeout=30)
        elif reply.kind == "stream":
            events, stall = reply.payload
            self._send_stream(events, stall)
        else:
            self._send_json(reply.status, reply.payload)

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_test")
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, events: Sequence[tuple[str, Mapping[str, Any]]], stall: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        if stall:
            self.server.fake.release.wait(timeout=30)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeAnthropicServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout tests) is expected; stay quiet."""


@contextmanager
def serve() -> Iterator[FakeAnthropicServer]:
    """Run a fake server for the duration of the block; `base_url` is its root (the SDK
    appends `/v1/messages`)."""
    fake = FakeAnthropicServer()
    server = _Server(fake)
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll interval keeps `shutdown()` (which waits for the next poll) fast.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# Wire-format builders -------------------------------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    """A `text` content block."""
    return {"type": "text", "text": text}


def tool_use_block(id: str, name: str, input: Mapping[str, Any]) -> dict[str, Any]:
    """A `tool_use` content block."""
    return {"type": "tool_use", "id": id, "name": name, "input": dict(input)}


def message_body(
    content: Sequence[Mapping[str, Any]],
    *,
    stop_reason: str | None = "end_turn",
    model: str = "claude-test-20250101",
    usage: tuple[int, int] = (12, 5),
    id: str = "msg_01",
) -> dict[str, Any]:
    """A complete `message` reply."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The body of an error response, and the data of a stream `error` event."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


Event = tuple[str, dict[str, Any]]


def message_start(*, model: str = "claude-test-20250101", input_tokens: int = 12) -> Event:
    """`message_start`: the message shell with empty content."""
    shell = message_body([], stop_reason=None, model=model, usage=(input_tokens, 1))
    return "message_start", {"type": "message_start", "message": shell}


def block_start(index: int, block: Mapping[str, Any]) -> Event:
    """`content_block_start`; for `tool_use` the block's `input` is `{}`."""
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": dict(block),
    }


def text_delta(index: int, text: str) -> Event:
    """`content_block_delta` with a `text_delta`."""
    delta = {"type": "text_delta", "text": text}
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def json_delta(index: int, partial_json: str) -> Event:
    """`content_block_delta` with an `input_json_delta`."""
    delta = {"type": "input_json_delta", "partial_json": partial_json}
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> Event:
    """`content_block_stop`."""
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, *, output_tokens: int = 9) -> Event:
    """`message_delta`: the stop reason and the cumulative output usage."""
    return "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


def message_stop() -> Event:
    """`message_stop`."""
    return "message_stop", {"type": "message_stop"}


def ping() -> Event:
    """`ping`, which may appear anywhere in a stream."""
    return "ping", {"type": "ping"}


def error_event(error_type: str, message: str) -> Event:
    """An `error` event inside a stream (e.g. `overloaded_error`)."""
    return "error", error_body(error_type, message)
