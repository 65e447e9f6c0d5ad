"""The API docs page `/docs` (Swagger UI), from bundled assets only.

FastAPI's own page loads Swagger UI from a CDN, so it is blank offline. This serves the
same page with the script, style and favicon that the `fastapi-offline` package ships
(Swagger UI 5, which renders OpenAPI 3.1) under `/docs/assets/`: it loads nothing from
elsewhere. ReDoc (`/redoc`) is not served: its page loads its logo from its CDN. Not in
the OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from keel.server.errors import ApiError

router = APIRouter(include_in_schema=False)

ASSETS_URL = "/docs/assets"
_ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"
_TYPES: Mapping[str, str] = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}
"""The assets served, by name (nothing else under `ASSETS_URL`)."""


def _base(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI on this server's `/openapi.json`."""
    base = _base(request)
    return get_swagger_ui_html(
        openapi_url=f"{base}/openapi.json",
        title="Keel - API docs",
        swagger_js_url=f"{base}{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{base}{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{base}{ASSETS_URL}/favicon.png",
    )


@router.get(ASSETS_URL + "/{name}")
async def asset(name: str) -> Response:
    """One bundled asset (404 `docs.asset_not_found` for any other name)."""
    content_type = _TYPES.get(name)
    if content_type is None:
        raise ApiError(404, "docs.asset_not_found", f"no docs asset {name[:80]!r}")
    return Response(
        (_ASSETS / name).read_bytes(),
        headers={"content-type": content_type, "cache-control": "public, max-age=86400"},
    )
