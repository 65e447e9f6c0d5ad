"""Ordered blocks: a `:::ordered_block id=<id>` region of a skill.md and its steps."""

from __future__ import annotations

from dataclasses import dataclass

from keel.skills.steps import END, END_ID, Step


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlock:
    """One ordered block, with the step helpers the runtime walks it by."""

    block_id: str
    """The fence attribute `id=`; unique within the skill."""
    line: int
    """Line of the opening `:::ordered_block` fence."""
    name: str | None = None
    description: str | None = None
    steps: tuple[Step, ...]
    """Steps in written order; may include an explicit `id: END` step."""

    def flow_id(self, skill_id: str) -> str:
        """Compiled flow id `<skill_id>__<block_id>` (what tracker events name)."""
        return f"{skill_id}__{self.block_id}"

    def step(self, step_id: str) -> Step | None:
        """The step with `step_id`; `END` always resolves (declared or implicit)."""
        for candidate in self.steps:
            if candidate.id == step_id:
                return candidate
        return END if step_id == END_ID else None

    @property
    def first_step(self) -> Step:
        """Where the block starts (END for a block without steps)."""
        return self.steps[0] if self.steps else END

    def following(self, step_id: str) -> Step:
        """The step written after `step_id` (fall-through when it has no `next`).

        The last step, an unknown id and END itself all fall through to END.
        """
        if step_id == END_ID:
            return END
        for index, candidate in enumerate(self.steps):
            if candidate.id == step_id:
                if index + 1 < len(self.steps):
                    return self.steps[index + 1]
                return END
        return END

    @property
    def step_ids(self) -> tuple[str, ...]:
        """Ids of the written steps, in order."""
        return tuple(s.id for s in self.steps)
