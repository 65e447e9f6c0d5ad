"""A parsed skill.md: frontmatter fields, prose paragraphs, ordered blocks and tokens.

These are plain frozen values; `keel.skills.parse.parse_skill` builds them and reports
authoring mistakes as diagnostics. Checks that need other files (unknown tools, responses,
memory entries, skills) are done by the project builder on these values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from keel.conditions import Condition
from keel.skills.blocks import OrderedBlock

TokenKind = Literal["block", "skill", "memory", "tool"]


@dataclass(frozen=True, kw_only=True, slots=True)
class CompleteWhen:
    """Frontmatter `complete_when`: an auto-completion condition and/or criteria."""

    condition: Condition | None = None
    criteria: tuple[str, ...] = ()
    """Natural-language checks run when `complete_skill` is called; they disable
    auto-completion from prose."""
    line: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ImportTool:
    """One `import_tools` entry: a shared tool, or `mcp/<server>:<tool>`."""

    name: str
    """Name the tool goes by in this skill (for MCP entries, the remote tool name)."""
    line: int
    mcp_server: str | None = None
    mcp_tool: str | None = None

    @property
    def is_mcp(self) -> bool:
        """True for `mcp/<server>:<tool>` entries."""
        return self.mcp_server is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Confirmation:
    """`requires_confirmation` of a tool constraint."""

    enabled: bool = False
    utter_for_confirmation: str | None = None
    utter_on_user_denial: str | None = None
    line: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolConstraint:
    """One `tool_constraints` entry."""

    tool: str
    line: int
    requires: Condition | None = None
    requires_confirmation: Confirmation | None = None
    on_success: str | None = None
    """Response uttered after a successful call."""
    on_failure: str | None = None
    """Response uttered after a failed call."""
    contract: Mapping[str, object] | None = None
    """Plan-contract keys (`effect`, `bindings`, ...; plan-cache spec §3.5) laid over the
    tool's own contract; None when the entry declares none."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UtterTrigger:
    """One frontmatter `utter:` entry: fire a response on activation or when a condition holds."""

    response: str
    on: Literal["activate"] | None = None
    when: Condition | None = None
    line: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Routing:
    """Frontmatter `routing:`."""

    engine_managed: bool = False
    """The engine activates the skill itself; the LLM can never route to it."""
    hidden: bool = False
    """Never offered to the LLM for routing."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Paragraph:
    """A prose paragraph (text between blank lines), optionally scoped by an `if:` line."""

    text: str
    line: int
    """Line of the paragraph's first text line."""
    condition: Condition | None = None
    """From a column-0 `if:` line just above; the paragraph is shown only while it holds."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Token:
    """An `@block.` / `@skill.` / `@memory.` / `@tool.` token in prose or step instructions."""

    kind: TokenKind
    target: str
    """Block id, skill id, tool name, or `<namespace>.<entry>` for memory."""
    line: int

    @property
    def text(self) -> str:
        """The token as written, e.g. `@memory.project.name`."""
        return f"@{self.kind}.{self.target}"


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillDocument:
    """One parsed skill.md."""

    skill_id: str
    """The folder name (never the `name:` field)."""
    file: str
    name: str
    description: str
    requires: Condition | None = None
    complete_when: CompleteWhen | None = None
    import_tools: tuple[ImportTool, ...] = ()
    tool_constraints: tuple[ToolConstraint, ...] = ()
    utter: tuple[UtterTrigger, ...] = ()
    disabled: bool = False
    routing: Routing = Routing()
    tier: str | None = None
    """Model tier (`router`, `default`, `reasoning`, ...) resolved at request time."""
    max_turns: int | None = None
    """Model round trips allowed per turn while this skill is active."""
    examples: tuple[str, ...] = ()
    """Example user utterances that should route here."""
    planner: bool = False
    """L3 planner mode: on a cache miss the model proposes one whole plan (`keel.plans`)
    instead of calling tools one round trip at a time."""
    plan_cache: bool = True
    """The plan cache may serve and record plans for this skill (when the agent enables it)."""
    history_tool_results: bool | None = None
    """`history: {tool_results: ...}`: whether earlier turns' tool calls and results go into
    the model's history while this skill is active (None: the agent's setting, else yes,
    except for a skill with ordered blocks)."""
    paragraphs: tuple[Paragraph, ...] = ()
    blocks: tuple[OrderedBlock, ...] = ()
    tokens: tuple[Token, ...] = ()
    key_lines: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Line of each frontmatter key, for diagnostics found by cross-file checks."""

    def line_of(self, key: str) -> int:
        """Line of frontmatter `key` (line 1, the opening `---`, when absent)."""
        return self.key_lines.get(key, 1)

    def block(self, block_id: str) -> OrderedBlock | None:
        """The block with `block_id`, if any."""
        for candidate in self.blocks:
            if candidate.block_id == block_id:
                return candidate
        return None

    @property
    def has_prose(self) -> bool:
        """True when the body has instructions outside blocks (headings alone do not count)."""
        return any(not is_heading_only(p.text) for p in self.paragraphs)

    @property
    def is_block_only(self) -> bool:
        """A "fully controlled" skill: blocks and no prose."""
        return bool(self.blocks) and not self.has_prose

    @property
    def routable(self) -> bool:
        """False for disabled, hidden and engine-managed skills (`requires` aside)."""
        return not (self.disabled or self.routing.hidden or self.routing.engine_managed)


def is_heading_only(text: str) -> bool:
    """True when every line of `text` is a markdown ATX heading."""
    return all(line.lstrip().startswith("#") for line in text.splitlines())
