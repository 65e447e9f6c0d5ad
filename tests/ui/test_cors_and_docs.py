"""Browsers: CORS for the configured origins only, and `/docs` working with no network.

A real `keel run` with `KEEL_CORS_ORIGINS` naming one origin; two pages served by plain
HTTP servers on other loopback ports (one the allowed origin, one not) call the API with
`fetch` from headless Chromium: the allowed page gets the answer (preflight included), the
other is blocked by the browser. `/docs` is loaded with every request to anything but the
server aborted: Swagger UI renders the API from bundled assets and no request fails.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import OUTAGE_SCRIPT, ROOT
from live_server import live_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

KEY = "cors-secret"
FETCH = """async ([url, key]) => {
  try {
    const r = await fetch(url, {
      method: "POST",
      headers: {"Authorization": "Bearer " + key, "Content-Type": "application/json"},
      body: JSON.stringify({text: "my internet is down"}),
    });
    return {status: r.status, conversation: r.headers.get("X-Keel-Conversation-Id"),
            text: await r.text()};
  } catch (error) {
    return {blocked: String(error)};
  }
}"""


@contextmanager
def static_site(folder: Path) -> Iterator[str]:
    """`folder` served over HTTP on a free loopback port; yields its origin."""
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(allowed origin, other origin): two pages on their own loopback ports."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>front end</title>", encoding="utf-8")
    with static_site(site) as allowed, static_site(site) as other:
        yield allowed, other


@contextmanager
def keel(tmp_path: Path, origins: str) -> Iterator[str]:
    script = tmp_path / "script.yml"
    script.write_text(OUTAGE_SCRIPT, encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"web:chat:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        "KEEL_RATE_LIMIT": "off",
        "KEEL_CORS_ORIGINS": origins,
    }
    args = [str(ROOT / "examples" / "support"), "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        yield base


@contextmanager
def new_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        context.close()


def test_cors_lets_the_configured_origin_in_and_no_other(
    browser: Browser, sites: tuple[str, str], tmp_path: Path
) -> None:
    allowed, other = sites
    with keel(tmp_path, allowed) as base:
        url = f"{base}/v1/conversations/cors-1/messages"
        with new_page(browser) as page:
            page.goto(f"{allowed}/index.html")
            let_in: dict[str, Any] = page.evaluate(FETCH, [url, KEY])
        with new_page(browser) as page:
            page.goto(f"{other}/index.html")
            kept_out: dict[str, Any] = page.evaluate(FETCH, [url, KEY])
            health: dict[str, Any] = page.evaluate(
                "async (u) => { try { return {status: (await fetch(u)).status}; }"
                " catch (e) { return {blocked: String(e)}; } }",
                f"{base}/health",
            )
    assert let_in.get("status") == 200, let_in
    assert "What's the postcode" in let_in["text"]
    assert let_in["conversation"] is None  # not a header of this endpoint's answers
    assert "blocked" in kept_out, kept_out
    assert "blocked" in health, health  # even a simple GET's answer is not readable


def test_docs_render_with_no_network(browser: Browser, tmp_path: Path) -> None:
    with keel(tmp_path, "") as base:
        requested: list[str] = []
        aborted: list[str] = []
        failed: list[str] = []

        def only_the_server(route: Route) -> None:
            requested.append(route.request.url)
            if route.request.url.startswith(base + "/"):
                route.continue_()
            else:
                aborted.append(route.request.url)
                route.abort()

        with new_page(browser) as page:
            page.route("**/*", only_the_server)
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(f"{base}/docs")
            page.locator(".swagger-ui .info .title").filter(has_text="Keel").wait_for()
            page.locator(".opblock-summary-path", has_text="/v1/responses").first.wait_for()
            operations = page.locator(".opblock").count()
            page.screenshot(path=str(tmp_path / "docs.png"))
    assert aborted == [] and failed == [], (aborted, failed)
    assert f"{base}/docs/assets/swagger-ui-bundle.js" in requested
    assert f"{base}/openapi.json" in requested
    assert operations >= 20
