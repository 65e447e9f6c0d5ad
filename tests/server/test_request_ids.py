"""Request ids: the client's `X-Request-ID` is echoed when it is a plausible id and replaced
by a fresh one otherwise; the readable log format shows the id on each line."""

from __future__ import annotations

import json
import logging
import sys

from server_kit import ALICE, ServeFactory

from keel.server.log_config import KEEL_FORMAT, JsonFormatter, RequestIdFilter
from keel.server.request_id import CURRENT, accepted_id


async def test_a_plausible_request_id_is_echoed_and_a_bad_one_replaced(
    serve: ServeFactory,
) -> None:
    async with serve(["Hello."]) as s:
        kept = await s.client.get("/health", headers={"X-Request-ID": "trace-7:a.b_c"})
        forged = await s.client.get("/health", headers={"X-Request-ID": "x\tINFO forged line"})
        none = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "hi"}, headers=ALICE
        )
    assert kept.headers["x-request-id"] == "trace-7:a.b_c"
    assert forged.headers["x-request-id"] != "x\tINFO forged line"
    assert accepted_id(forged.headers["x-request-id"]) is not None
    assert none.status_code == 200
    assert accepted_id(none.headers["x-request-id"]) is not None
    assert none.headers["x-request-id"] != forged.headers["x-request-id"]
    assert accepted_id("x" * 129) is None and accepted_id("") is None


def _record(message: str, **extra: object) -> logging.LogRecord:
    record = logging.makeLogRecord({"name": "keel.loop", "levelname": "ERROR", "msg": message})
    record.__dict__.update(extra)
    RequestIdFilter().filter(record)
    return record


def test_the_readable_format_shows_the_request_id_only_inside_a_request() -> None:
    formatter = logging.Formatter(KEEL_FORMAT)
    outside = formatter.format(_record("starting"))
    token = CURRENT.set("req-1")
    try:
        inside = formatter.format(_record("turn failed"))
    finally:
        CURRENT.reset(token)
    assert outside.endswith(" ERROR keel.loop: starting")
    assert inside.endswith(" ERROR keel.loop [req-1]: turn failed")


def test_a_json_line_carries_the_extra_fields_and_the_exception() -> None:
    try:
        raise ValueError("bad value")
    except ValueError:
        info = sys.exc_info()
    record = _record("tool raised", conversation_id="a/c1", turn_id="t-1")
    record.exc_info = info
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "tool raised" and line["request_id"] is None
    assert line["conversation_id"] == "a/c1" and line["turn_id"] == "t-1"
    assert line["error_type"] == "ValueError" and line["error"] == "bad value"
    assert "Traceback" in line["traceback"] and "request_tag" not in line
