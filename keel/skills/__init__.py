"""Skills: skill.md documents, their prose, ordered blocks and steps.

    document, diagnostics = parse_skill("redirect_parcel", text, "skills/redirect_parcel/skill.md")

`parse_skill` never raises on bad input; authoring mistakes come back as diagnostics with
dotted codes (`skill.*`, `yaml.*`, `condition.*`) and real file lines.
"""

from keel.skills._instructions import instruction_parts
from keel.skills.blocks import OrderedBlock
from keel.skills.bundled import (
    default_responses_file,
    defaults_root,
    load_default_skills,
    read_default_responses,
)
from keel.skills.model import (
    CompleteWhen,
    Confirmation,
    ImportTool,
    Paragraph,
    Routing,
    SkillDocument,
    Token,
    TokenKind,
    ToolConstraint,
    UtterTrigger,
)
from keel.skills.parse import parse_skill
from keel.skills.steps import (
    END,
    END_ID,
    SPECIAL_ACTIONS,
    STEP_KINDS,
    ActionStep,
    Branch,
    CallStep,
    CollectStep,
    EndStep,
    ExecuteToolStep,
    InstructionPart,
    InstructionsStep,
    LinkStep,
    NextSpec,
    NoopStep,
    SetMemoryStep,
    Step,
    is_deterministic,
    parameter_reference,
)

__all__ = [
    "END",
    "END_ID",
    "SPECIAL_ACTIONS",
    "STEP_KINDS",
    "ActionStep",
    "Branch",
    "CallStep",
    "CollectStep",
    "CompleteWhen",
    "Confirmation",
    "EndStep",
    "ExecuteToolStep",
    "ImportTool",
    "InstructionPart",
    "InstructionsStep",
    "LinkStep",
    "NextSpec",
    "NoopStep",
    "OrderedBlock",
    "Paragraph",
    "Routing",
    "SetMemoryStep",
    "SkillDocument",
    "Step",
    "Token",
    "TokenKind",
    "ToolConstraint",
    "UtterTrigger",
    "default_responses_file",
    "defaults_root",
    "instruction_parts",
    "is_deterministic",
    "load_default_skills",
    "parameter_reference",
    "parse_skill",
    "read_default_responses",
]
