"""parse_skill never raises: random text, and random mutations of a valid skill.md."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_skills_parse_valid import RICH

from keel.skills import parse_skill

# Characters that matter to the three languages of a skill file.
_ALPHABET = (
    st.sampled_from(list("-:@.#|>{}[]\t\n \"'=_ifelsnotudpEND0123aAsession")) | st.characters()
)
_RICH_LINES = RICH.split("\n")


def _check(text: str) -> None:
    document, diagnostics = parse_skill("fuzz", text, "skills/fuzz/skill.md")
    assert document is not None or diagnostics
    assert all(d.line is None or d.line >= 1 for d in diagnostics)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=_ALPHABET, max_size=400))
def test_random_text_never_raises(text: str) -> None:
    _check(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=_ALPHABET, max_size=300))
def test_random_body_after_valid_frontmatter_never_raises(body: str) -> None:
    _check("---\nname: N\ndescription: D\n---\n" + body)


@st.composite
def _mutated_rich(draw: st.DrawFn) -> str:
    lines = list(_RICH_LINES)
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "replace", "insert", "indent"]))
        if action == "delete" and len(lines) > 1:
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "replace":
            lines[index] = draw(st.text(alphabet=_ALPHABET, max_size=60))
        elif action == "insert":
            lines.insert(index, draw(st.text(alphabet=_ALPHABET, max_size=60)))
        else:
            lines[index] = draw(st.sampled_from(["  ", "\t", "    ", ""])) + lines[index].strip()
    return "\n".join(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated_rich())
def test_mutations_of_a_valid_skill_never_raise(text: str) -> None:
    _check(text)


def test_pathological_inputs_never_raise() -> None:
    for text in [
        "",
        "---",
        "---\n---",
        "\ufeff---\r\nname: N\r\ndescription: D\r\n---\r\nProse\r\n",
        "---\nname: N\ndescription: D\n---\n:::ordered_block id=main\n" + "[" * 2000 + "\n:::\n",
        "---\n" + "a: " * 500 + "\n---\n",
        "---\nname: !!int x\n---\n",
        "---\nname: N\ndescription: D\nrequires: '" + "(" * 500 + "'\n---\nx\n",
        "---\nname: N\ndescription: D\n---\nif: " + "not " * 1000 + "True\nx\n",
    ]:
        _check(text)
