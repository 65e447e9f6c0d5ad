"""The immutable `AgentDefinition`: everything the runtime needs from an agent project."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from keel.memory import MemorySchema
from keel.project.config import AgentConfig
from keel.project.endpoints import EndpointsConfig
from keel.project.integrations import IntegrationsConfig
from keel.project.response_model import Response
from keel.skills.model import ImportTool, SkillDocument
from keel.skills.steps import CollectStep
from keel.source.diagnostics import Diagnostic
from keel.tools import HookDefinition, ToolDefinition


@dataclass(frozen=True, kw_only=True, slots=True)
class Skill:
    """One skill with the tools and hooks it resolved to at load time."""

    document: SkillDocument
    tools: Mapping[str, ToolDefinition]
    """Builder tools the skill may use: its own first, then imported shared ones."""
    hooks: Mapping[str, HookDefinition]
    """Memory entry -> post-write hook `run_after_setting_<entry>`."""
    mcp_imports: tuple[ImportTool, ...] = ()
    """`mcp/<server>:<tool>` imports, resolved when MCP servers are connected."""
    bundled: bool = False
    """True for a default skill Keel ships that the project did not override."""

    @property
    def skill_id(self) -> str:
        """The folder name."""
        return self.document.skill_id

    @property
    def collect_owned(self) -> frozenset[str]:
        """Entries (bare names) that a `collect:` step of this skill owns."""
        return frozenset(
            step.entry
            for block in self.document.blocks
            for step in block.steps
            if isinstance(step, CollectStep)
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentDefinition:
    """A loaded, validated agent project. Built once; never changed afterwards."""

    root: Path
    config: AgentConfig
    integrations: IntegrationsConfig
    memory: MemorySchema
    responses: Mapping[str, Response]
    skills: Mapping[str, Skill]
    shared_tools: Mapping[str, ToolDefinition]
    endpoints: EndpointsConfig = field(default_factory=EndpointsConfig)
    """What Keel reads of `endpoints.yml` (the `nlg:` rephraser)."""
    warnings: tuple[Diagnostic, ...] = ()

    def skill(self, skill_id: str) -> Skill | None:
        """The skill with this id, if any."""
        return self.skills.get(skill_id)

    def response(self, name: str) -> Response | None:
        """The response with this name, if any."""
        return self.responses.get(name)


class DefinitionSource(Protocol):
    """Gives the definition for the next request (MCP tool lists may change between turns)."""

    async def current(self) -> AgentDefinition: ...
