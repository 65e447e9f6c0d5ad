"""How `keel run` logs: uvicorn's own configuration, plus Keel's loggers.

Keel's loggers (`keel.*`: the turn loop, the server, MCP, stores) write to stderr as
`<time> <LEVEL> <logger>: <message>`, a traceback following when there is one, at the
level given to `keel run --log-level`. Without this they would have no handler under
uvicorn, and Python's fallback would print bare messages (no level, no time).
"""

from __future__ import annotations

import copy
from typing import Any

from uvicorn.config import LOGGING_CONFIG

KEEL_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def server_log_config(level: str) -> dict[str, Any]:
    """The `log_config` for `uvicorn.run`: uvicorn's default with a `keel` logger added."""
    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["keel"] = {"format": KEEL_FORMAT}
    config["handlers"]["keel"] = {
        "formatter": "keel",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["keel"] = {
        "handlers": ["keel"],
        "level": level.upper(),
        "propagate": False,
    }
    return config
