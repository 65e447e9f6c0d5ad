"""Measuring search quality on a labelled question set (recall@k), for tests and benchmarks.

A question set is YAML:

    agent: examples/support            # the project, relative to the file's repository root
    questions:
      - q: When do you send out the monthly bill?
        expect: ["references/billing.md#Bills and payments > When bills arrive"]
        set: heldout                   # optional: a group of questions (default `dev`)
    unanswerable:                      # optional: questions the documents do not answer
      - Do you sell mobile phone contracts?

`expect` names sections as `source#heading path`; a question counts as found when any of
them is among the first `k` hits. `unanswerable` questions count as handled when the
search returns nothing for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from keel.knowledge.index import Mode
from keel.knowledge.service import ProjectKnowledge


@dataclass(frozen=True, kw_only=True, slots=True)
class Question:
    """One labelled question."""

    text: str
    expect: tuple[str, ...]
    """Acceptable sections, as `source#heading`."""
    group: str = "dev"
    """`set:` in the file: `dev` (default) or e.g. `heldout` (written after tuning)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class QuestionSet:
    """A labelled question set and the agent it is about."""

    agent: str
    questions: tuple[Question, ...]
    unanswerable: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Quality:
    """Results of one search mode on a question set."""

    mode: Mode
    k: int
    found: int
    total: int
    missed: tuple[str, ...]
    """Questions whose expected sections were not in the first `k` hits."""
    silent: int
    """Unanswerable questions for which the search returned nothing."""
    unanswerable: int

    @property
    def recall(self) -> float:
        """Share of questions with an expected section in the first `k` hits."""
        return self.found / self.total if self.total else 0.0


def load_question_set(path: Path) -> QuestionSet:
    """Read a question set file (see the module docstring)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    questions = tuple(
        Question(
            text=str(item["q"]),
            expect=tuple(str(e) for e in item["expect"]),
            group=str(item.get("set", "dev")),
        )
        for item in data["questions"]
    )
    unanswerable = tuple(str(q) for q in data.get("unanswerable") or ())
    return QuestionSet(agent=str(data["agent"]), questions=questions, unanswerable=unanswerable)


def section_key(source: str, heading: str) -> str:
    """`source#heading`, the way question sets name a section."""
    return f"{source}#{heading}"


async def measure(
    knowledge: ProjectKnowledge,
    questions: QuestionSet,
    *,
    mode: Mode = "hybrid",
    k: int = 3,
    group: str | None = None,
) -> Quality:
    """Recall@k of `knowledge` on `questions` (those of `group`, or all) in `mode`."""
    chosen = [q for q in questions.questions if group is None or q.group == group]
    missed: list[str] = []
    for question in chosen:
        hits = await knowledge.hits(question.text, top_k=k, mode=mode)
        keys = {section_key(h.chunk.source, h.chunk.heading) for h in hits}
        if not keys & set(question.expect):
            missed.append(question.text)
    silent = 0
    for text in questions.unanswerable:
        silent += not await knowledge.hits(text, top_k=k, mode=mode)
    total = len(chosen)
    return Quality(
        mode=mode,
        k=k,
        found=total - len(missed),
        total=total,
        missed=tuple(missed),
        silent=silent,
        unanswerable=len(questions.unanswerable),
    )


def describe(results: Sequence[Quality]) -> list[str]:
    """One line per result, for logs and assertion messages."""
    return [
        f"{r.mode}: recall@{r.k} {r.found}/{r.total} = {r.recall:.3f}; "
        f"unanswerable with no hit {r.silent}/{r.unanswerable}; missed: {list(r.missed)}"
        for r in results
    ]
