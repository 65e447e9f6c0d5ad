"""Headings-aware chunking of reference documents (`references.chunking`)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from keel.knowledge.chunking import Chunk, chunk_document, sections, split_text
from keel.project.references import ChunkingConfig

DOC = """Intro text before any heading.

# Billing

## Late fees

A £5 fee is added.

## Paying

```
# not a heading inside a fence
```
Pay by card.

# Empty parent

### Deep child
Text under a skipped level.
"""


def test_sections_carry_heading_paths_and_skip_empty_ones() -> None:
    found = sections(DOC)
    assert [s.heading for s in found] == [
        "",
        "Billing > Late fees",
        "Billing > Paying",
        "Empty parent > Deep child",
    ]
    assert found[1].text == "## Late fees\n\nA £5 fee is added."
    assert "# not a heading inside a fence" in found[2].text
    assert found[0].text == "Intro text before any heading."


def test_a_small_section_is_one_chunk_with_its_heading_beside_it() -> None:
    chunks = chunk_document("references/b.md", DOC, ChunkingConfig())
    assert len(chunks) == 4
    late = chunks[1]
    assert late == Chunk(
        source="references/b.md",
        heading="Billing > Late fees",
        text="## Late fees\n\nA £5 fee is added.",
    )
    assert late.search_text.startswith("Billing > Late fees\n## Late fees")
    assert chunks[0].search_text == "Intro text before any heading."


def test_long_sections_are_cut_at_breaks_with_overlap() -> None:
    paragraph = " ".join(f"Sentence number {i} is here." for i in range(40))
    text = f"# Long\n\n{paragraph}\n\n{paragraph}"
    chunks = chunk_document("r.md", text, ChunkingConfig(chunk_size=300, chunk_overlap=40))
    assert len(chunks) > 4
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.heading == "Long" for c in chunks)
    for before, after in itertools.pairwise(chunks):
        assert before.text.endswith((".", "here.")), before.text[-20:]
        assert after.text.split()[0] in before.text  # the overlap repeats a little


def test_split_without_any_break_still_makes_progress() -> None:
    pieces = split_text("x" * 95, 20, 5)
    assert all(len(p) <= 20 for p in pieces) and "".join(pieces).count("x") >= 95


@given(
    text=st.text(alphabet=st.sampled_from("ab .\n#"), max_size=400),
    size=st.integers(min_value=5, max_value=80),
    overlap=st.integers(min_value=0, max_value=4),
)
def test_pieces_fit_and_cover_the_text(text: str, size: int, overlap: int) -> None:
    pieces = split_text(text, size, overlap)
    assert all(0 < len(p) <= size for p in pieces)
    visible = "".join(text.split())
    # Every visible character lands in a piece (overlaps repeat some, cuts drop none).
    assert sum(len("".join(p.split())) for p in pieces) >= len(visible)
    assert set("".join(pieces)) - set(" \n") == set(visible)
