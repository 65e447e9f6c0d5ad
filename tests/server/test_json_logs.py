"""`keel run --log-format json`: every line of the server's output is one JSON object,
each carrying the request id (the client's `X-Request-ID`, or one the server made and
echoed), and every failed turn is one ERROR line naming the conversation, the turn and
the cause: a tool's traceback, the provider's error and HTTP status, the store's error.

Each test runs the real `keel run` process; the failures are real too: a tool that raises,
a model server answering 500, a port where nothing listens, and a SQLite file the kernel
stops growing (the process's file size limit, lowered with `prlimit` once the server is
up: every write past the end of a file gets EFBIG, as writes get ENOSPC on a full disk;
SQLite reports it as a "disk I/O error").
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from live_server import _wait_ready, free_port, keel_run_command

from keel.server.request_id import accepted_id

AGENTS = Path(__file__).resolve().parent / "agents"
KEY = "ops-secret"
HEADERS = {"x-api-key": KEY}
TOOL_SCRIPT = """\
- tool_calls: [{name: activate, arguments: {target_id: breaker}}]
- tool_calls: [{name: explode, arguments: {}}]
- That did not work.
"""


@dataclass
class Running:
    base: str
    process: subprocess.Popen[bytes]
    log: Path

    def lines(self) -> list[dict[str, Any]]:
        """Every line after the banner, each parsed as JSON (a line that is not fails)."""
        text = self.log.read_text(encoding="utf-8").splitlines()
        body = [line for line in text if line and not _banner(line)]
        parsed = []
        for line in body:
            assert line.startswith("{"), f"not a JSON line: {line!r}"
            parsed.append(json.loads(line))
        return parsed


def _banner(line: str) -> bool:
    # `keel run` prints where it serves before logging starts (typer.echo, not a log line).
    return line.startswith(("Keel is serving", "  "))


@contextmanager
def json_server(agent: str, tmp_path: Path, *args: str, **env: str) -> Iterator[Running]:
    """`keel run AGENT --log-format json --log-level info`, its output in a file."""
    port = free_port()
    command = [*keel_run_command(), str(AGENTS / agent), *args, "--port", str(port)]
    command += ["--log-format", "json", "--log-level", "info"]
    environment = {
        **os.environ,
        "KEEL_API_KEYS": f"ops:chat,admin:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        **env,
    }
    log = tmp_path / f"server-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=tmp_path, env=environment, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, base, log)
        yield Running(base=base, process=process, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def errors(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["level"] == "ERROR"]


def last_turn(http: httpx.Client, conversation: str) -> str:
    events = http.get(f"/v1/conversations/{conversation}/events").json()["events"]
    return [e["event"]["turn_id"] for e in events if e["event"]["type"] == "turn_started"][-1]


def test_a_tool_that_raises_is_one_json_line_with_ids_and_traceback(tmp_path: Path) -> None:
    script = tmp_path / "script.yml"
    script.write_text(TOOL_SCRIPT, encoding="utf-8")
    with json_server("failing", tmp_path, "--model", f"scripted:{script}") as server:
        with httpx.Client(base_url=server.base, headers=HEADERS, timeout=30) as http:
            reply = http.post(
                "/v1/conversations/ops-1/messages",
                json={"text": "break it"},
                headers={"X-Request-ID": "client-req.42"},
            )
            turn = last_turn(http, "ops-1")
        lines = server.lines()
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-request-id"] == "client-req.42"
    (raised,) = [e for e in errors(lines) if e["message"].startswith("tool explode raised")]
    assert raised["logger"] == "keel.loop"
    assert raised["conversation_id"] == "ops/ops-1" and raised["turn_id"] == turn
    assert raised["request_id"] == "client-req.42"
    assert raised["error_type"] == "RuntimeError" and raised["error"] == "the breaker exploded"
    assert raised["traceback"].startswith("Traceback (most recent call last):")
    assert 'raise RuntimeError("the breaker exploded")' in raised["traceback"]
    # The access line of the same request carries the same id.
    path = "/v1/conversations/ops-1/messages"
    (access,) = [e for e in lines if e["logger"] == "uvicorn.access" and e.get("path") == path]
    assert access["request_id"] == "client-req.42" and access["status"] == 200
    assert access["method"] == "POST"
    # Lines outside a request (startup) say so with a null id; none lacks the field.
    assert all("request_id" in line for line in lines)
    assert any(line["request_id"] is None for line in lines)


class _Failing(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that always answers 500 with an error body."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"error": {"message": "upstream exploded", "type": "server_error"}})
        self.send_response(500)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:  # the test's output stays quiet
        pass


@contextmanager
def failing_model_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _model_failure(tmp_path: Path, url: str) -> tuple[httpx.Response, str, dict[str, Any]]:
    with json_server("remote", tmp_path, REMOTE_MODEL_URL=url, OPENAI_API_KEY="sk-test") as server:
        with httpx.Client(base_url=server.base, headers=HEADERS, timeout=60) as http:
            reply = http.post("/v1/conversations/m-1/messages", json={"text": "hello"})
            turn = last_turn(http, "m-1")
        lines = server.lines()
    (failed,) = [e for e in errors(lines) if e["message"].startswith("model call failed")]
    assert failed["conversation_id"] == "ops/m-1" and failed["turn_id"] == turn
    # No X-Request-ID was sent: the server made one, logged it and answered with it.
    assert failed["request_id"] == reply.headers["x-request-id"]
    assert accepted_id(failed["request_id"]) is not None
    return reply, turn, failed


def test_a_provider_answering_500_is_logged_with_its_status_and_error(tmp_path: Path) -> None:
    with failing_model_server() as url:
        reply, turn, failed = _model_failure(tmp_path, url)
    assert reply.status_code == 200, reply.text
    assert failed["http_status"] == 500 and failed["provider"] == "openai"
    assert failed["error_code"] == "keel.model.unavailable"
    assert failed["error_type"] == "ProviderUnavailable"
    assert "upstream exploded" in failed["error"]
    assert "HTTP 500" in failed["message"] and turn in failed["message"]


def test_an_unreachable_provider_is_logged_with_no_status(tmp_path: Path) -> None:
    nobody = free_port()  # nothing listens there
    reply, _turn, failed = _model_failure(tmp_path, f"http://127.0.0.1:{nobody}/v1")
    assert reply.status_code == 200, reply.text
    assert failed["http_status"] is None and failed["error_type"] == "ProviderUnavailable"
    assert failed["error_code"] == "keel.model.unavailable"


def test_a_full_disk_is_logged_with_the_stores_error(tmp_path: Path) -> None:
    script = tmp_path / "script.yml"
    script.write_text("- Hello.\n- Hello again.\n", encoding="utf-8")
    database = tmp_path / "keel.db"
    with json_server("failing", tmp_path, "--model", f"scripted:{script}") as server:
        with httpx.Client(base_url=server.base, headers=HEADERS, timeout=30) as http:
            started = http.post("/v1/conversations/d-1/messages", json={"text": "/session_start"})
            assert started.status_code == 200, started.text
            # From here on no file of the server may grow: the WAL file is the first to try.
            wal = Path(f"{database}-wal").stat().st_size
            pid = server.process.pid
            _soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (wal, hard))
            failed = http.post(
                "/v1/conversations/d-1/messages",
                json={"text": "hello"},
                headers={"X-Request-ID": "disk-1"},
            )
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
            turn = last_turn(http, "d-1")
        lines = server.lines()
    assert failed.status_code == 500 and failed.json()["error"]["code"] == "turn.failed"
    assert failed.headers["x-request-id"] == "disk-1"
    stored = [e for e in errors(lines) if e["message"].startswith("event store failed")]
    assert stored, errors(lines)
    # The turn's first append failed: its id is in the log line only, not in the store.
    (first,) = stored
    assert first["logger"] == "keel.loop" and first["conversation_id"] == "ops/d-1"
    assert first["turn_id"] and first["turn_id"] != turn
    assert first["request_id"] == "disk-1" and first["error_type"] == "StoreError"
    # EFBIG from the kernel: SQLite's "disk I/O error", the store's error around it.
    assert "disk I/O error" in first["error"]
    assert "sqlite3.OperationalError" in first["traceback"]
    (server_line,) = [e for e in errors(lines) if e["logger"] == "keel.server"]
    assert server_line["request_id"] == "disk-1" and server_line["conversation_id"] == "ops/d-1"
