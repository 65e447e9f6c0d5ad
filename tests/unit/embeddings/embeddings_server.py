"""A local HTTP server that speaks the OpenAI Embeddings wire format (`POST /v1/embeddings`).

    with serve_embeddings(vectors_for) as server:
        embedder = OpenAIEmbedder(model="text-embedding-3-small", base_url=server.base_url)
        ...
        assert server.requests[0]["input"] == ["..."]

`vectors_for(texts, dimensions)` makes the vectors (a test passes the local embedder's, or
a deterministic toy). The reply is a `CreateEmbeddingResponse` body: `object: "list"`,
`data` items `{object: "embedding", index, embedding}` (floats, or base64 little-endian
float32 when the request asks `encoding_format: "base64"`), `model`, `usage`. `reverse`
sends the items in reverse order (clients must order them by `index`); `fail(status,
message)` answers the next request with an OpenAI-style error. The stdlib
`ThreadingHTTPServer` runs on 127.0.0.1, port 0, in a background thread.
"""

from __future__ import annotations

import base64
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

VectorsFor = Callable[[Sequence[str], int | None], Sequence[Sequence[float]]]
PATH = "/v1/embeddings"


class EmbeddingsServer:
    """State shared by the handler threads: recorded bodies, pending failures, options."""

    def __init__(self, vectors_for: VectorsFor, *, reverse: bool = False) -> None:
        self.vectors_for = vectors_for
        self.reverse = reverse
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""
        self._failures: deque[tuple[int, str]] = deque()
        self._lock = threading.Lock()

    def fail(self, status: int, message: str, *, times: int = 1) -> None:
        """Answer the next `times` requests with this error."""
        with self._lock:
            self._failures.extend([(status, message)] * times)

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            status, message = failure
            error = {"message": message, "type": "invalid_request_error", "param": None}
            return status, {"error": {**error, "code": None}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if not all(isinstance(t, str) and t for t in texts):
            return 400, {"error": {"message": "input must be non-empty strings", "type": "x"}}
        vectors = self.vectors_for(texts, body.get("dimensions"))
        items = [
            {"object": "embedding", "index": i, "embedding": _encode(v, body)}
            for i, v in enumerate(vectors)
        ]
        if self.reverse:
            items.reverse()
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
        return 200, {"object": "list", "data": items, "model": body["model"], "usage": usage}


def _encode(vector: Sequence[float], body: dict[str, Any]) -> Any:
    if body.get("encoding_format") == "base64":
        raw = np.asarray(vector, dtype="<f4").tobytes()
        return base64.b64encode(raw).decode()
    return [float(x) for x in vector]


def toy_vectors(texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
    """Deterministic unnormalised vectors: letter counts of each text (a-z, then zeros)."""
    size = dimensions or 32
    out = []
    for text in texts:
        row = [0.0] * size
        for ch in text.lower():
            if "a" <= ch <= "z":
                row[(ord(ch) - 97) % size] += 1.0
        out.append(row)
    return out


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != PATH:
            status, reply = 404, {"error": {"message": f"no route {self.path}", "type": "x"}}
        else:
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, reply = self.server.owner.answer(body, headers)
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: EmbeddingsServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


@contextmanager
def serve_embeddings(
    vectors_for: VectorsFor = toy_vectors, *, reverse: bool = False
) -> Iterator[EmbeddingsServer]:
    """Run an `EmbeddingsServer` for the `with` block."""
    owner = EmbeddingsServer(vectors_for, reverse=reverse)
    server = _Server(owner)
    owner.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
