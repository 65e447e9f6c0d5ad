"""`OpenAIWireServer`: a local Chat Completions server that answers from a `ScriptedModel`.

    with OpenAIWireServer() as server:
        server.use(script)                     # inside the event loop that owns `script`
        model = OpenAIChatModel(model="gpt-4.1", base_url=server.base_url, timeout=5)
        ...                                    # drive the engine with `model`

So the same conversation tests run through a real adapter and its official SDK: the server
turns each `POST /v1/chat/completions` body back into a `ModelRequest` (which the script
records, so request checks read what crossed the wire), takes the script's next reply and
sends it as a `chat.completion`, or with `"stream": true` as SSE `chat.completion.chunk`s
(text in pieces, each tool call as id and name then its arguments in two pieces, the finish
reason, the usage chunk when `stream_options.include_usage` asks, `data: [DONE]`).

The stdlib `ThreadingHTTPServer` runs on 127.0.0.1, port 0, in a background thread. The
script is not thread-safe and belongs to the test's event loop, so a handler thread submits
`script.complete(request)` to that loop (`asyncio.run_coroutine_threadsafe`) and waits; the
loop is free meanwhile, since the adapter awaits the HTTP response (a blocking client on
that loop's thread would stall until `REPLY_TIMEOUT`). A request the script has no reply for
gets a 400 error (never retried; the script remembers its `ScriptExhausted` for the runner).
The tier does not travel over the wire: `tier_of` maps the requested model id back to one.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import yaml

from keel.llm.port import Message, ModelRequest, ModelResponse, ToolSchema, Usage
from keel.testing.scripted import ScriptedModel, ScriptExhausted

PATH = "/v1/chat/completions"
"""The one endpoint served (the adapter's `base_url` is `base_url`, ending in `/v1`)."""

REPLY_TIMEOUT = 30.0
"""Seconds a handler waits for the script's reply before answering 500."""


@dataclass(frozen=True, kw_only=True, slots=True)
class WireRequest:
    """One request as it arrived: the JSON body, and whether it asked for a stream."""

    body: Mapping[str, Any]
    stream: bool


class _BadRequest(Exception):
    """The body is not a Chat Completions request this server understands."""


class OpenAIWireServer:
    """A Chat Completions server on 127.0.0.1 answering from the script given to `use`."""

    def __init__(
        self,
        *,
        tier_of: Callable[[str], str] | None = None,
        served_model: Callable[[str], str] | None = None,
        usage: Usage | None = None,
        piece_size: int = 8,
    ) -> None:
        """`tier_of` gives a request's tier from its `model`; `served_model` the model id
        the reply names (default: the requested one; OpenAI answers with a dated snapshot
        id); `usage` is reported instead of the script's (scripted replies carry none);
        `piece_size` is the length of the text pieces of a stream."""
        self._tier_of = tier_of or (lambda _model: "default")
        self._served_model = served_model or (lambda model: model)
        self._usage = usage
        self._piece_size = max(1, piece_size)
        self._lock = threading.Lock()
        self._script: ScriptedModel | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests: list[WireRequest] = []
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.01,), daemon=True
        )
        self._thread.start()
        port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        """What to give the adapter as `base_url`."""

    def use(self, script: ScriptedModel, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Answer from `script` from now on; `loop` owns it (default: the running loop)."""
        owner = loop or asyncio.get_running_loop()
        with self._lock:
            self._script, self._loop = script, owner

    @property
    def requests(self) -> tuple[WireRequest, ...]:
        """Every request received so far, in order."""
        with self._lock:
            return tuple(self._requests)

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIWireServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def answer(self, body: Mapping[str, Any]) -> tuple[int, Mapping[str, Any] | list[bytes]]:
        """The status and the JSON body (or SSE pieces) for one request body."""
        stream = body.get("stream") is True
        with self._lock:
            self._requests.append(WireRequest(body=body, stream=stream))
            script, loop = self._script, self._loop
        if script is None or loop is None:
            return 500, _error("no script in use (call OpenAIWireServer.use)", "server_error")
        try:
            request = _model_request(body, self._tier_of)
        except _BadRequest as exc:
            return 400, _error(str(exc), "invalid_request_error")
        try:
            future = asyncio.run_coroutine_threadsafe(script.complete(request), loop)
            response = future.result(timeout=REPLY_TIMEOUT)
        except ScriptExhausted as exc:
            return 400, _error(str(exc), "invalid_request_error")
        except Exception as exc:  # the test's problem, reported to the adapter as a 500
            return 500, _error(f"{type(exc).__name__}: {exc}", "server_error")
        model = self._served_model(str(body.get("model", "")))
        if self._usage is not None:
            response = replace(response, usage=self._usage)
        if stream:
            include_usage = _include_usage(body)
            return 200, list(_sse(response, model, self._piece_size, include_usage))
        return 200, _completion(response, model)


def serve_project_models(project: Path, base_url: str) -> None:
    """Point every model of the project's `integrations.yml` at `base_url` (an
    `OpenAIWireServer`'s), in place: each becomes `provider: openai_compatible` with that
    `api_base` and no key; ids, groups, tiers and prices stay. For a copy of a project, so
    `keel chat` or `keel run` with the agent's own models talk to the local server."""
    path = project / "integrations.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for group in config.get("model_groups") or []:
        for model in group.get("models") or []:
            for key in ("api_key", "api_key_env"):
                model.pop(key, None)
            model.update(provider="openai_compatible", api_base=base_url)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


# Request decoding ------------------------------------------------------------------------


def _model_request(body: Mapping[str, Any], tier_of: Callable[[str], str]) -> ModelRequest:
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise _BadRequest("'messages' must be a list of message objects")
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise _BadRequest("'tools' must be a list")
    return ModelRequest(
        messages=tuple(cast(Message, message) for message in messages),
        tools=tuple(_tool(tool) for tool in tools),
        tier=tier_of(str(body.get("model", ""))),
    )


def _tool(raw: object) -> ToolSchema:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _BadRequest(f"a tool must be {{'type': 'function', 'function': {{...}}}}: {raw!r}")
    parameters = function.get("parameters") or {}
    return ToolSchema(
        name=function["name"],
        description=str(function.get("description") or ""),
        parameters=parameters if isinstance(parameters, dict) else {},
    )


def _include_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


# Reply encoding --------------------------------------------------------------------------


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _finish_reason(response: ModelResponse) -> str:
    return "tool_calls" if response.tool_calls else "stop"


def _usage(response: ModelResponse) -> dict[str, Any]:
    used = response.usage
    usage: dict[str, Any] = {
        "prompt_tokens": used.input_tokens,
        "completion_tokens": used.output_tokens,
        "total_tokens": used.input_tokens + used.output_tokens,
    }
    if used.cached_input_tokens:  # as OpenAI reports prompt-cache hits
        usage["prompt_tokens_details"] = {"cached_tokens": used.cached_input_tokens}
    return usage


def _completion(response: ModelResponse, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.tool_calls:
        message["tool_calls"] = [call.to_message_part() for call in response.tool_calls]
    choice = {"index": 0, "message": message, "finish_reason": _finish_reason(response)}
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": _usage(response),
    }


def _sse(response: ModelResponse, model: str, size: int, include_usage: bool) -> Iterator[bytes]:
    def chunk(delta: Mapping[str, Any] | None, finish: str | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
        }
        if delta is None:
            body["usage"] = _usage(response)
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    yield chunk({"role": "assistant", "content": ""})
    text = response.text or ""
    for start in range(0, len(text), size):
        yield chunk({"content": text[start : start + size]})
    for index, call in enumerate(response.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        half = len(call.arguments) // 2
        for piece in (call.arguments[:half], call.arguments[half:]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish_reason(response))
    if include_usage:
        yield chunk(None)
    yield b"data: [DONE]\n\n"


# HTTP plumbing ---------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.rstrip("/") != PATH:
            self._send_json(404, _error(f"no route {self.path}", "invalid_request_error"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            self._send_json(400, _error("the body is not JSON", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send_json(400, _error("the body is not a JSON object", "invalid_request_error"))
            return
        status, reply = self.server.owner.answer(body)
        if isinstance(reply, list):
            self._send_stream(reply)
        else:
            self._send_json(status, reply)

    def _send_json(self, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, pieces: list[bytes]) -> None:
        # No Content-Length: the stream ends when the connection closes (HTTP/1.0).
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for piece in pieces:
            self.wfile.write(piece)
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: OpenAIWireServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


__all__ = ["PATH", "REPLY_TIMEOUT", "OpenAIWireServer", "WireRequest", "serve_project_models"]
