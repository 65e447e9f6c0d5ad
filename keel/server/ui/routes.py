"""Routes of the web UI: the three pages and their assets, read from package data.

`GET /` redirects to the chat page; `GET /ui/chat`, `/ui/inspector` and `/ui/plans` answer
the pages and `GET /ui/static/{name}` an asset of `keel/server/ui/static/`. None of them
needs a key (each page asks for one and sends it with its API calls). Every answer carries
a Content-Security-Policy that allows only this origin (no inline scripts or styles), so
the pages work offline and load nothing from elsewhere. An asset name is one file name of
a known type (no folders, no leading dot): anything else is 404 `ui.asset_not_found`.
These routes are left out of the OpenAPI schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from keel.server.errors import ApiError

router = APIRouter(include_in_schema=False)

CONTENT_SECURITY_POLICY = "default-src 'self'; frame-ancestors 'none'"
"""Only this origin; the pages may not be framed by another site."""

PAGES: Mapping[str, str] = {
    "chat": "chat.html",
    "inspector": "inspector.html",
    "plans": "plans.html",
}
"""`/ui/<page>` and the file of `static/` it serves."""

CONTENT_TYPES: Mapping[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}
"""The asset types served, by file extension."""

_ASSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*\Z")


def _headers(content_type: str) -> dict[str, str]:
    return {
        "content-type": content_type,
        "content-security-policy": CONTENT_SECURITY_POLICY,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        # Assets change with the installed version; revalidate rather than serve stale.
        "cache-control": "no-cache",
    }


def static_dir() -> Traversable:
    """The folder of the UI's assets in the installed package."""
    return files("keel.server.ui").joinpath("static")


def read_asset(name: str) -> tuple[bytes, str] | None:
    """(content, content type) of the asset `name`, or None when there is none such."""
    if not _ASSET_NAME.match(name) or len(name) > 128:
        return None
    dot = name.rfind(".")
    content_type = CONTENT_TYPES.get(name[dot:].lower()) if dot > 0 else None
    if content_type is None:
        return None
    asset = static_dir().joinpath(name)
    if not asset.is_file():
        return None
    return asset.read_bytes(), content_type


def _asset_response(name: str) -> Response:
    found = read_asset(name)
    if found is None:
        raise ApiError(404, "ui.asset_not_found", f"no UI asset {name!r}")
    content, content_type = found
    return Response(content, headers=_headers(content_type))


@router.get("/")
async def root() -> RedirectResponse:
    """The chat page."""
    return RedirectResponse("/ui/chat", status_code=307)


@router.get("/ui/chat")
async def chat_page() -> Response:
    """The web chat."""
    return _asset_response(PAGES["chat"])


@router.get("/ui/inspector")
async def inspector_page() -> Response:
    """The Inspector: a conversation's events, state and timings (admin key)."""
    return _asset_response(PAGES["inspector"])


@router.get("/ui/plans")
async def plans_page() -> Response:
    """The plan cache console (admin key)."""
    return _asset_response(PAGES["plans"])


@router.get("/ui/static/{name}")
async def asset(name: str) -> Response:
    """One asset of the UI (CSS, JavaScript, images)."""
    return _asset_response(name)
