"""`keel index` builds the knowledge index into the database once; `keel chat` indexes first."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from keel.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "tests" / "conversations" / "agents" / "knowledge"
PLAIN = ROOT / "tests" / "conversations" / "agents" / "greeter"


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_index_builds_once_then_finds_it_current(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    shutil.copytree(AGENT, project)
    url = f"sqlite:///{tmp_path / 'keel.db'}"
    code, out, err = _run("index", str(project), "--database-url", url)
    assert code == 0, out + err
    assert "knowledge index built: 2 chunks (2 embedded, 0 reused)" in out
    assert "embedder all-MiniLM-L6-v2" in out
    code, out, _ = _run("index", str(project), "--database-url", url)
    assert code == 0 and "knowledge index is up to date (2 chunks)" in out
    shop = project / "references" / "shop.md"
    shop.write_text(shop.read_text().replace("thirty", "sixty"), encoding="utf-8")
    code, out, _ = _run("index", str(project), "--database-url", url)
    assert code == 0 and "(1 embedded, 1 reused)" in out


def test_index_without_references_or_with_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'keel.db'}"
    code, out, _ = _run("index", str(PLAIN), "--database-url", url)
    assert code == 0 and "no reference documents" in out
    code, _, err = _run("index", str(tmp_path / "missing"), "--database-url", url)
    assert code == 1 and "not indexing it" in err


def test_chat_indexes_before_the_conversation(tmp_path: Path) -> None:
    script = tmp_path / "replies.yml"
    script.write_text("- Hello from the shop.\n", encoding="utf-8")
    code, out, err = _run("chat", str(AGENT), "--model", f"scripted:{script}", stdin="hi\n")
    assert code == 0, out + err
    assert "knowledge index" in err and "2 chunks" in err
    assert "bot: Hello from the shop." in out


def test_run_refuses_an_agent_whose_embedder_cannot_be_built(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    shutil.copytree(AGENT, project)
    (project / "agent.yml").write_text(
        (AGENT / "agent.yml").read_text() + "references:\n  embeddings: vectors\n",
        encoding="utf-8",
    )
    (project / "integrations.yml").write_text(
        (AGENT / "integrations.yml").read_text()
        + "  - id: vectors\n    models:\n      - provider: openai\n"
        + "        model: text-embedding-3-small\n",
        encoding="utf-8",
    )
    script = tmp_path / "replies.yml"
    script.write_text("- ok\n", encoding="utf-8")
    code, _, err = _run("run", str(project), "--model", f"scripted:{script}")
    assert code == 2 and "references.embeddings" in err and "API key" in err
    code, _, err = _run("index", str(project), "--database-url", f"sqlite:///{tmp_path / 'k.db'}")
    assert code == 1 and "indexing failed" in err


def test_index_warns_about_chunks_longer_than_the_embedder_reads(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    shutil.copytree(AGENT, project)
    with (project / "agent.yml").open("a", encoding="utf-8") as f:
        f.write("references:\n  chunking: {chunk_size: 4000}\n")
    long = " ".join(f"Rule {i}: books are shelved by author and title." for i in range(60))
    (project / "references" / "long.md").write_text(f"# Shelving\n\n{long}\n", encoding="utf-8")
    code, out, err = _run("index", str(project), "--database-url", f"sqlite:///{tmp_path / 'k.db'}")
    assert code == 0, out + err
    assert (
        "warning: references/long.md (Shelving):" in err and "more than the embedder's 256" in err
    )
    assert "references/shop.md" not in err
