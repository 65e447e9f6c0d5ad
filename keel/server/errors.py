"""HTTP errors of the server: one JSON shape for every 4xx and 5xx.

Every error answer is `{"error": {"code": ..., "message": ..., "type": ...}}`: `code` is a
stable dotted code (`conversation.busy`, `auth.missing_key`, ...), `message` is for people
and `type` is the OpenAI error type for the status, so OpenAI clients raise the matching
exception class. Validation errors (422) add `details`, one entry per problem.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from keel.server.wire import ErrorBody, ErrorDetail, ErrorReply

_log = logging.getLogger("keel.server")

_TYPES: Mapping[int, str] = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    501: "not_implemented_error",
}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorReply, "description": text}
    for status, text in (
        (401, "No API key, or an unknown one."),
        (403, "The key lacks the scope this endpoint needs."),
        (413, "The request body is too large."),
        (422, "The request is not valid (`details` lists the problems)."),
        (429, "The key's rate limit is reached (see `Retry-After`)."),
    )
}
"""The error answers every authenticated endpoint may give, for OpenAPI."""


class ApiError(Exception):
    """Raised by routes and dependencies; rendered as the error JSON with `status`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def error_type(status: int) -> str:
    """The OpenAI-style error type of an HTTP status."""
    if status in _TYPES:
        return _TYPES[status]
    return "server_error" if status >= 500 else "invalid_request_error"


def error_body(status: int, code: str, message: str) -> ErrorReply:
    """The JSON body of an error answer."""
    body: ErrorBody = {"code": code, "message": message, "type": error_type(status)}
    return {"error": body}


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A JSON error answer."""
    return JSONResponse(error_body(status, code, message), status_code=status, headers=headers)


def _details(errors: Sequence[Any]) -> list[ErrorDetail]:
    details: list[ErrorDetail] = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        details.append({"loc": loc, "message": str(error.get("msg", ""))})
    return details


async def _on_api_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, exc.headers)


async def _on_validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = _details(exc.errors())
    first = details[0] if details else {"loc": [], "message": "invalid request"}
    where = ".".join(first["loc"])
    body = error_body(422, "request.invalid", f"{where}: {first['message']}" if where else "")
    body["error"]["details"] = details
    return JSONResponse(body, status_code=422)


def _unparsable_body(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not parse a JSON body (its 400 "error parsing the body"), if so."""
    if exc.status_code != 400:
        return None
    if isinstance(exc.__cause__, RecursionError):
        return "body: JSON nested too deeply to read"
    if isinstance(exc.__cause__, ValueError):  # UnicodeDecodeError among them
        return "body: not valid UTF-8 JSON"
    return None


async def _on_http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    unparsable = _unparsable_body(exc)
    if unparsable is not None:
        body = error_body(422, "request.invalid", unparsable)
        body["error"]["details"] = [{"loc": ["body"], "message": unparsable.removeprefix("body: ")}]
        return JSONResponse(body, status_code=422)
    codes = {404: "route.not_found", 405: "route.method_not_allowed", 413: "request.too_large"}
    code = codes.get(exc.status_code, "request.rejected")
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _on_unexpected(_request: Request, exc: Exception) -> JSONResponse:
    _log.error("unhandled error", exc_info=exc)
    return error_response(500, "server.error", "internal error; see the server log")


def install_error_handlers(app: FastAPI) -> None:
    """Render `ApiError`, validation errors, HTTP errors and crashes as error JSON."""
    app.add_exception_handler(Exception, _on_unexpected)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
