"""How `keel run` logs: uvicorn's own configuration, plus Keel's loggers, as text or JSON.

Keel's loggers (`keel.*`: the turn loop, the server, MCP, stores) write to stderr at the
level given to `keel run --log-level`. Without this they would have no handler under
uvicorn, and Python's fallback would print bare messages (no level, no time).

`--log-format text` (the default) is for people: `<time> <LEVEL> <logger> [<request id>]:
<message>`, a traceback following when there is one; uvicorn's own lines keep their look
with the request id added to each access line. `--log-format json` is for log pipelines:
every line of every logger (Keel's and uvicorn's, access lines included) is one JSON
object (`JsonFormatter`, fields in docs/observability.md). Every record gets the id of
the HTTP request it belongs to (`keel.server.request_id`), None outside a request.
"""

from __future__ import annotations

import copy
import json
import logging
import traceback
from datetime import UTC, datetime
from typing import Any, Literal

from uvicorn.config import LOGGING_CONFIG

from keel.server.request_id import CURRENT

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

KEEL_FORMAT = "%(asctime)s %(levelname)s %(name)s%(request_tag)s: %(message)s"
ACCESS_FORMAT = (
    '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s%(request_tag)s'
)

_RECORD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "color_message",
    "request_id",
    "request_tag",
    "taskName",
}
"""What every `LogRecord` has; anything else on a record came from `extra=`."""


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on the record (`request_id`, `request_tag`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always True: this filter only adds attributes."""
        request_id = getattr(record, "request_id", None) or CURRENT.get()
        record.request_id = request_id
        record.request_tag = f" [{request_id}]" if request_id else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: `time` (UTC, ISO 8601), `level`, `logger`, `message`,
    `request_id`; what the record carries in `extra` (`conversation_id`, `turn_id`, the
    cause's fields); for uvicorn's access lines `client`, `method`, `path`, `status`; with
    an exception `error_type`, `error` and `traceback`."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        data: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or CURRENT.get(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            data.update(_access_fields(record.args))
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and key not in data:
                data[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            data["error_type"] = type(exc).__name__
            data["error"] = str(exc)
            data["traceback"] = "".join(traceback.format_exception(*record.exc_info))
        elif record.stack_info:
            data["stack"] = record.stack_info
        return json.dumps(data, ensure_ascii=False, default=str)


def _access_fields(args: tuple[object, ...]) -> dict[str, object]:
    """uvicorn's access record arguments: (client, method, path, HTTP version, status)."""
    if len(args) != 5:
        return {}
    client, method, path, version, status = args
    return {"client": client, "method": method, "path": path, "http": version, "status": status}


def server_log_config(level: str, log_format: LogFormat = "text") -> dict[str, Any]:
    """The `log_config` for `uvicorn.run`: uvicorn's default with a `keel` logger added,
    every handler tagging records with the request id; `json` formats every line as JSON."""
    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"request_id": {"()": "keel.server.log_config.RequestIdFilter"}}
    config["formatters"]["keel"] = {"format": KEEL_FORMAT}
    config["formatters"]["access"]["fmt"] = ACCESS_FORMAT
    config["handlers"]["keel"] = {
        "formatter": "keel",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    if log_format == "json":
        config["formatters"]["json"] = {"()": "keel.server.log_config.JsonFormatter"}
        for handler in config["handlers"].values():
            handler["formatter"] = "json"
    for handler in config["handlers"].values():
        handler["filters"] = ["request_id"]
    config["loggers"]["keel"] = {
        "handlers": ["keel"],
        "level": level.upper(),
        "propagate": False,
    }
    # The AMQP client's own lines would bypass these handlers (no JSON, no request id), and
    # keel.broker already reports each broker failure with its cause: only its worst pass.
    for name, floor in (("aio_pika", "WARNING"), ("aiormq", "CRITICAL")):
        config["loggers"][name] = {"handlers": ["keel"], "level": floor, "propagate": False}
    return config
