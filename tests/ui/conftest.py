"""Fixtures of the web UI's page tests: Debian's Chromium, a real `keel run`, a Playwright page.

* `chromium_path` (session): `/usr/bin/chromium`, installed with apt-get when it is missing
  and the tests run as root. Without it (or without the `playwright` package) the UI tests
  are skipped with the reason, unless `KEEL_REQUIRE_UI=1` (set by `.ci/run`): then they fail.
* `served_ui` (per test): `keel run` on a free loopback port, serving `ui_project` (the
  support example) with the model script `ui_script` (override either fixture in a test
  module to change them), a fresh SQLite file and known keys; yields a `ServedUi`.
* `page` (per test): a Playwright page of headless Chromium in a fresh browser context
  (so an empty `sessionStorage`); at the end of the test a screenshot is saved as
  `tests/ui/artifacts/<test>.png` (gitignored). It depends on `served_ui`, so the browser
  is closed before the server stops.
* `page_errors`: the page's uncaught errors, console errors (CSP violations included) and
  failed requests (a network failure, or an answer of 400 or more), collected from the
  moment it is requested.
* `KEEL_DOC_SCREENSHOTS=1` makes the tests that take the screenshots of docs/ui.md
  (`ui_kit.doc_screenshot`) write them to docs/img/ as well.

Page tests are plain `def` tests (Playwright's sync API refuses to run inside an asyncio
loop). Run them with `.venv/bin/pytest tests/ui`; screenshots land in tests/ui/artifacts/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

sys.path.append(str(Path(__file__).resolve().parents[1] / "server"))
from live_server import live_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
REQUIRE_UI = os.environ.get("KEEL_REQUIRE_UI") == "1"
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
INSTALL_TIMEOUT = 600
"""Seconds apt-get may take to install Chromium (each of update and install)."""

CHAT_KEY = "ui-chat-secret"
ADMIN_KEY = "ui-admin-secret"
LOCAL_KEY = "ui-local-secret"
KEYS = f"web:chat:{CHAT_KEY};ops:admin:{ADMIN_KEY};local:chat,admin:{LOCAL_KEY}"
"""`web` chats, `ops` administers, `local` does both (like the key `keel run` generates)."""

OUTAGE_SCRIPT = """\
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
"""
"""Model replies for "my internet is down" then "LN4 7QP", twice (taken in order by every
conversation of the server)."""


def _unavailable(reason: str) -> None:
    if REQUIRE_UI:
        pytest.fail(f"{reason}; KEEL_REQUIRE_UI=1 makes the UI tests mandatory")
    pytest.skip(reason)


def find_chromium() -> str | None:
    """The Chromium executable, if one is installed."""
    for path in CHROMIUM_PATHS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def install_chromium() -> str:
    """Install Debian's `chromium` with apt-get (as root); '' or what went wrong."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "-o",
        "DPkg::Lock::Timeout=300",
        "chromium",
    ]
    try:
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
        if done.returncode != 0:  # the package lists may be missing or stale
            subprocess.run(
                ["apt-get", "update"], env=env, capture_output=True, timeout=INSTALL_TIMEOUT
            )
            done = subprocess.run(
                install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if done.returncode == 0 else done.stderr.strip()[-500:]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium, installed now when missing and running as root."""
    found = find_chromium()
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        problem = install_chromium()
        found = find_chromium()
        if found is None:
            _unavailable(f"Chromium is not installed and apt-get could not install it: {problem}")
    if found is None:
        _unavailable(
            "Chromium is not installed (/usr/bin/chromium); install it with "
            "`apt-get install chromium`, or run the tests as root to have them install it"
        )
    assert found is not None
    return found


@dataclass(frozen=True, kw_only=True, slots=True)
class ServedUi:
    """A running `keel run` and how to reach it."""

    base_url: str
    chat_key: str
    """Key `web`, scope chat."""
    admin_key: str
    """Key `ops`, scope admin."""
    local_key: str
    """Key `local`, scopes chat and admin."""
    db_path: Path
    log_path: Path
    """The server's output (uvicorn's log at level warning)."""

    def url(self, path: str, *, key: str | None = None) -> str:
        """`base_url + path`, with `#key=<key>` when a key is given."""
        return f"{self.base_url}{path}" + (f"#key={key}" if key is not None else "")

    def headers(self, key: str) -> dict[str, str]:
        """Authorization headers for API calls made by the test itself."""
        return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def ui_project() -> Path:
    """The agent `served_ui` serves (override in a test module for another)."""
    return ROOT / "examples" / "support"


@pytest.fixture
def ui_script() -> str:
    """The model script (YAML text) `served_ui` answers with (override to change it)."""
    return OUTAGE_SCRIPT


@pytest.fixture
def served_ui(tmp_path: Path, ui_project: Path, ui_script: str) -> Iterator[ServedUi]:
    """`keel run ui_project --model scripted:<ui_script>` on a free loopback port."""
    script = tmp_path / "script.yml"
    script.write_text(ui_script, encoding="utf-8")
    db_path = tmp_path / "ui.db"
    env = {
        "KEEL_API_KEYS": KEYS,
        "KEEL_DATABASE_URL": f"sqlite:///{db_path}",
        "KEEL_RATE_LIMIT": "off",
    }
    args = [str(ui_project), "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        port = base.rsplit(":", 1)[1]
        yield ServedUi(
            base_url=base,
            chat_key=CHAT_KEY,
            admin_key=ADMIN_KEY,
            local_key=LOCAL_KEY,
            db_path=db_path,
            log_path=tmp_path / f"server-{port}.log",
        )


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Browser]:
    """Headless Chromium driven by Playwright's sync API (one per test module, so none is
    left running while the rest of the suite runs its asyncio tests)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[dev]')")
        raise
    with sync_playwright() as playwright:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        launched = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=args
        )
        try:
            yield launched
        finally:
            launched.close()


def _artifact_name(node_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", node_name).strip("_") + ".png"


@pytest.fixture
def page(browser: Browser, served_ui: ServedUi, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page (new context: empty storage); screenshot saved when the test ends."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        try:
            opened.screenshot(path=str(ARTIFACTS / _artifact_name(request.node.name)))
        except Exception as exc:  # a crashed page still lets the test report its own failure
            warnings.warn(f"no screenshot of {request.node.name}: {exc}", stacklevel=1)
        finally:
            context.close()


@pytest.fixture
def page_errors(page: Page) -> list[str]:
    """Uncaught errors, console errors (CSP violations included) and failed requests of
    `page` from now on: a request the network failed, or one answered 400 or more (a
    browser logs those as console errors too). A live stream the page aborts itself
    (`/stream`, net::ERR_ABORTED: it follows another conversation) is no failure. Expect it
    to stay empty."""
    errors: list[str] = []

    def on_console(message: Any) -> None:
        if message.type == "error":
            errors.append(f"console: {message.text} ({message.location.get('url', '')})")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            errors.append(f"response: {response.status} {response.request.method} {response.url}")

    def on_failed(request: Any) -> None:
        if request.failure == "net::ERR_ABORTED" and urlsplit(request.url).path.endswith("/stream"):
            return  # a live stream the page closed itself (another conversation, Follow off)
        errors.append(f"requestfailed: {request.method} {request.url} ({request.failure})")

    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", on_console)
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    return errors
