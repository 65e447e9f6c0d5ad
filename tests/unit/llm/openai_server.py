"""A local HTTP server that speaks the OpenAI Chat Completions wire format, for adapter tests.

    with serve() as server:
        server.reply_json(completion(content="hi"))
        model = OpenAIChatModel(model="gpt-test", api_key="sk-test", base_url=server.base_url)
        ...
        assert server.requests[0].body["model"] == "gpt-test"

Replies are scripted in order (`reply_json`, `reply_error`, `reply_stream`, `reply_raw`,
`reply_hang`); every request is recorded with its path, headers and parsed JSON body. The
server is the stdlib `ThreadingHTTPServer` on 127.0.0.1, port 0, in a background thread. A
`reply_hang` request blocks until the `serve()` block ends, so a client timeout can be
observed without the test sleeping.
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
    kind: str  # "json", "raw" or "hang"
    status: int = 200
    payload: Any = None


class FakeOpenAIServer:
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

    def reply_error(
        self, status: int, message: str, *, code: str | None = None, type: str = "invalid_request"
    ) -> None:
        """Answer the next request with an OpenAI-style error body."""
        error = {"message": message, "type": type, "param": None, "code": code}
        self.reply_json({"error": error}, status=status)

    def reply_stream(self, events: Sequence[Mapping[str, Any]], *, done: bool = True) -> None:
        """Answer the next request with SSE `data:` events, then `data: [DONE]`."""
        pieces = [b"data: " + json.dumps(event).encode() + b"\n\n" for event in events]
        if done:
            pieces.append(b"data: [DONE]\n\n")
        self.reply_raw_stream(*pieces)

    def reply_raw_stream(self, *pieces: bytes) -> None:
        """Answer the next request with an event stream of exactly these bytes."""
        self.reply_raw(*pieces, content_type="text/event-stream")

    def reply_raw(self, *pieces: bytes, content_type: str) -> None:
        """Answer the next request (200) with these bytes, flushed piece by piece."""
        self._push(_Reply(kind="raw", payload=(content_type, pieces)))

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
            self._send_json(500, {"error": {"message": "fake server: no reply scripted"}})
        elif reply.kind == "hang":
            self.server.fake.release.wait(timeout=30)
        elif reply.kind == "raw":
            self._send_raw(*reply.payload)
        else:
            self._send_json(reply.status, reply.payload)

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, content_type: str, pieces: Sequence[bytes]) -> None:
        # No Content-Length: the body ends when the connection closes (HTTP/1.0).
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for piece in pieces:
            self.wfile.write(piece)
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeOpenAIServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout test) is expected; stay quiet."""


@contextmanager
def serve() -> Iterator[FakeOpenAIServer]:
    """Run a fake server for the duration of the block; its `base_url` ends in `/v1`."""
    fake = FakeOpenAIServer()
    server = _Server(fake)
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    # A short poll interval keeps `shutdown()` (which waits for one poll) fast.
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


def completion(
    *,
    content: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    finish_reason: str | None = "stop",
    model: str = "gpt-test-2024",
    usage: tuple[int, int] | None = (11, 7),
    id: str = "chatcmpl-1",
) -> dict[str, Any]:
    """A `chat.completion` body with one choice."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    body: dict[str, Any] = {
        "id": id,
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = _usage(*usage)
    return body


def tool_call(name: str, arguments: str, *, id: str | None = "call_abc") -> dict[str, Any]:
    """One tool call of a `chat.completion` message; `id=None` leaves the id out."""
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id is not None:
        call["id"] = id
    return call


def chunk(
    delta: Mapping[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    model: str = "gpt-test-2024",
    usage: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """A `chat.completion.chunk`; `delta=None` gives the usage-only chunk (no choices)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = _usage(*usage)
    return body


def tool_delta(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    """One entry of a chunk's `delta.tool_calls`."""
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    entry: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    return entry


def _usage(prompt: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }
