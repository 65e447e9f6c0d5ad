"""Fixtures of the voice channel tests: Debian's espeak-ng (installed with apt-get when it is
missing and the tests run as root, as tests/ui installs Chromium). The real `keel run`
the tests call is `voice_kit.serve` (a uniquely named module: `from conftest import`
would find another directory's conftest when the whole suite runs in one process)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

INSTALL_TIMEOUT = 600


def _install_espeak() -> str:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "-o"]
    install += ["DPkg::Lock::Timeout=300", "espeak-ng"]
    try:
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
        if done.returncode != 0:
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
def espeak() -> str:
    """The espeak-ng binary, installed now when missing (as root)."""
    found = shutil.which("espeak-ng")
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        problem = _install_espeak()
        found = shutil.which("espeak-ng")
        if found is None:
            pytest.fail(f"espeak-ng is missing and apt-get could not install it: {problem}")
    if found is None:
        pytest.fail("espeak-ng is missing: apt-get install espeak-ng (or run the tests as root)")
    return found
