"""The web UI's routes: pages and assets from package data, their types and CSP, no escapes."""

from __future__ import annotations

import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from server_kit import ROOT, ServeFactory

from keel.cli.run_cmd import _banner
from keel.server.ui.routes import CONTENT_SECURITY_POLICY, PAGES, read_asset

STATIC = Path(str(files("keel.server.ui").joinpath("static")))
TYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript"}


def _assets() -> list[str]:
    return sorted(p.name for p in STATIC.iterdir() if p.suffix in TYPES)


async def test_root_redirects_to_the_chat_page(serve: ServeFactory) -> None:
    async with serve() as s:
        answer = await s.client.get("/")
    assert answer.status_code == 307
    assert answer.headers["location"] == "/ui/chat"


@pytest.mark.parametrize("page", sorted(PAGES))
async def test_each_page_is_served_without_a_key_under_the_csp(
    serve: ServeFactory, page: str
) -> None:
    async with serve() as s:
        answer = await s.client.get(f"/ui/{page}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'self'")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.content == (STATIC / PAGES[page]).read_bytes()
    assert answer.text.lower().startswith("<!doctype html>")


async def test_every_asset_is_served_with_its_content_type(serve: ServeFactory) -> None:
    names = _assets()
    assert {"api.js", "app.css", "chat.html"} <= set(names)
    async with serve() as s:
        answers = {name: await s.client.get(f"/ui/static/{name}") for name in names}
    for name, answer in answers.items():
        assert answer.status_code == 200, name
        expected = TYPES[Path(name).suffix]
        assert answer.headers["content-type"].split(";")[0] == expected, name
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.content == (STATIC / name).read_bytes()


def test_pages_load_only_existing_local_assets_and_nothing_inline() -> None:
    # The CSP would block inline scripts and styles and anything from elsewhere.
    for page in PAGES.values():
        html = (STATIC / page).read_text(encoding="utf-8")
        for url in re.findall(r'(?:src|href)="([^"#]+)"', html):
            assert url.startswith("/"), (page, url)
            if url.startswith("/ui/static/"):
                assert read_asset(url.removeprefix("/ui/static/")) is not None, (page, url)
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag, (page, tag)
        assert "<style" not in html and " style=" not in html, page
        assert not re.search(r"\son[a-z]+=", html), page


@pytest.mark.parametrize(
    "path",
    [
        "/ui/static/nothing.js",
        "/ui/static/routes.py",
        "/ui/static/__init__.py",
        "/ui/static/.hidden.css",
        "/ui/static/..%2Froutes.py",
        "/ui/static/%2E%2E%2F__init__.py",
        "/ui/static/..%5Croutes.py",
        "/ui/static/static%2Fapp.css",
        "/ui/static/app.css%00.js",
        "/ui/static/..",
        "/ui/nothing",
    ],
)
async def test_unknown_assets_and_escapes_are_404(serve: ServeFactory, path: str) -> None:
    async with serve() as s:
        answer = await s.client.get(path)
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"]["code"] in {"ui.asset_not_found", "route.not_found"}
    assert "import" not in answer.text  # no Python source leaked


async def test_an_unknown_asset_name_has_its_own_code(serve: ServeFactory) -> None:
    async with serve() as s:
        answer = await s.client.get("/ui/static/nothing.js")
        posted = await s.client.post("/ui/chat")
    assert answer.json()["error"]["code"] == "ui.asset_not_found"
    assert posted.status_code == 405


@pytest.mark.parametrize(
    "name", ["../routes.py", "..", ".", "a/b.js", "a\\b.js", "x.py", "app.css\x00", "", ".css"]
)
def test_read_asset_takes_only_plain_file_names(name: str) -> None:
    assert read_asset(name) is None


async def test_ui_routes_are_not_in_the_openapi_schema(serve: ServeFactory) -> None:
    async with serve() as s:
        schema = (await s.client.get("/openapi.json")).json()
    assert not [p for p in schema["paths"] if p == "/" or p.startswith("/ui")]


def test_the_assets_are_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["keel"]
    assert {"**/*.html", "**/*.js", "**/*.css"} <= set(patterns)
    dev = config["project"]["optional-dependencies"]["dev"]
    assert any(d.startswith("playwright") for d in dev)


def test_keel_run_prints_the_ui_addresses_with_the_generated_key() -> None:
    generated = _banner("agent", "127.0.0.1", 8000, "keel-local-abc")
    configured = _banner("agent", "127.0.0.1", 8000, None)
    assert "http://127.0.0.1:8000/ui/chat#key=keel-local-abc" in generated
    assert "http://127.0.0.1:8000/ui/inspector#key=keel-local-abc" in generated
    assert "http://127.0.0.1:8000/ui/plans#key=keel-local-abc" in generated
    assert "http://127.0.0.1:8000/ui/chat\n" in configured
    assert "#key=" not in configured
