"""Generate the scale-benchmark agent: 57 skills and 91 tools (seed 004's size).

    python bench/scale/generate.py OUT_DIR [--seed 4]

Writes a Keel project to OUT_DIR (never into the repository: the benchmark writes it to a
temporary folder) and validates it with Keel's own loader. The same seed gives the same
files. The project: 56 routable skills over 14 business domains (prose skills with `if:`
paragraphs and memory tokens, skills entering an ordered block with collect and
execute_tool steps, block-only skills), `default_session_start` loading the profile, 91
tools (most shared in `tools/<domain>.py` and spread over skills with `import_tools`, the
others a skill's own), tool constraints with conditions and confirmations, skill and
project memory, responses with `set:` buttons, and a small `references/` knowledge base.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from catalog import domains
from plan import SESSION_TOOL, ProjectPlan, plan_project
from render import memory_yml, responses_yml, skill_md
from render_tools import module

from keel.project.definition import AgentDefinition
from keel.project.load import load_project
from keel.source.diagnostics import Diagnostic, has_errors

DEFAULT_SEED = 4
ENV = {"OPENAI_API_KEY": "unused-by-the-benchmark"}
"""`${VAR}` values for loading: the scripted model never reads them."""
MAX_PROMPT_TOKENS = 8000
"""`llm.max_prompt_tokens`: with 30+ earlier turns the history is compressed, as in the
seed trace (4.1k tokens after compression)."""

AGENT_YML = """\
agent:
  id: northwind-desk
  language: en
  persona: |
    You are Desk, the operations assistant of Northwind, a mid-sized B2B software company.
    You help staff and customers with accounts, billing, orders, shipping, stock, CRM,
    analytics, calendars, documents, support tickets, HR, compliance, marketing and
    subscriptions. You are precise, brief and friendly, and you never invent data.
name: Northwind Desk
description: Generated agent for Keel's scale benchmark (57 skills, 91 tools).
rules:
  - "Only state figures, dates, prices and references that a tool returned."
  - "Never read back a full card number, password or verification code."
  - "Ask for confirmation before any change that cannot be undone."
  - "Personal data requests (export, deletion) go through the compliance skills only."
  - "If the user asks for legal or tax advice, say you cannot give it."
  - "Answer in the user's language when it is one of English, French, German or Spanish."
  - "Keep internal tool names and ids out of replies."
  - "When two skills could apply, ask one short question to decide."
prompts:
  text_rules: |
    Keep replies under five short sentences. Use a numbered list only for steps.
  routing_no_active_skill: |
    Pick the skill whose description matches the request. If nothing fits, say in one
    sentence what you can help with.
tool_timeout: 10
session_config:
  session_expiration_time: 60
max_turns: 10
"""

INTEGRATIONS_YML = """\
llm:
  model_group: main
  max_prompt_tokens: {tokens}
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4.1
        api_key_env: OPENAI_API_KEY
  - id: fast
    models:
      - provider: openai
        model: gpt-4.1-mini
        api_key_env: OPENAI_API_KEY
  - id: deep
    models:
      - provider: openai
        model: o4-mini
        api_key_env: OPENAI_API_KEY
        reasoning_effort: medium
tiers:
  router: fast
  default: main
  reasoning: deep
escalation:
  reasoning_skills: [{reasoning}]
  long_input_chars: 1500
  attachments: 2
channels:
  rest:
    enabled: true
"""

PROJECT_MEMORY = """\
customer_id:
  type: text
  seed: true
  description: Account id the channel sends when the user is signed in.
authenticated:
  type: bool
  mutable: true
  initial_value: false
  description: True once the user is signed in or verified.
customer_name:
  type: text
  mutable: true
  description: The user's display name.
account_tier:
  type: categorical
  enum_values: [free, pro, enterprise]
  mutable: true
  description: The account's tier.
last_reference:
  type: text
  mutable: true
  description: The last record reference a tool looked up.
locale:
  type: text
  mutable: true
  initial_value: en
  description: The user's language code.
"""

PROJECT_RESPONSES = """\
responses:
  utter_greet:
    - text: "Hi {customer_name}, Desk here. What can I do for you?"
      condition: session.project.customer_name != None
    - text: "Hi, I'm Desk, Northwind's assistant. What can I do for you?"
  utter_ask_wants_to_continue:
    - text: "Anything else I can help with, {customer_name}?"
      condition: session.project.customer_name != None
    - text: "Anything else I can help with?"
"""

SESSION_START = f"""\
---
name: Session start
description: >
  Runs once when a conversation begins: loads the profile of a signed-in user, then greets.
routing:
  engine_managed: true
import_tools:
  - {SESSION_TOOL}
---
:::ordered_block id=main
steps:
  - id: known
    noop: true
    next:
      - if: session.project.customer_id != None
        then: load
      - else: greet
  - id: load
    execute_tool: {SESSION_TOOL}
    parameters:
      customer_id: session.project.customer_id
  - id: greet
    action: utter_greet
:::
"""


@dataclass(frozen=True, kw_only=True, slots=True)
class Generated:
    """A generated project, loaded."""

    root: Path
    plan: ProjectPlan
    definition: AgentDefinition
    warnings: tuple[Diagnostic, ...]


def write_project(root: Path, seed: int = DEFAULT_SEED) -> ProjectPlan:
    """Write the project for `seed` into `root` (created; must be empty or absent)."""
    plan = plan_project(seed)
    rng = random.Random(seed * 7919 + 1)
    root.mkdir(parents=True, exist_ok=True)
    reasoning = ", ".join(plan.reasoning_skills)
    integrations = INTEGRATIONS_YML.format(tokens=MAX_PROMPT_TOKENS, reasoning=reasoning)
    _write(root / "agent.yml", AGENT_YML)
    _write(root / "integrations.yml", integrations)
    _write(root / "memory.yml", PROJECT_MEMORY)
    _write(root / "responses.yml", PROJECT_RESPONSES)
    _write(root / "skills" / "default_session_start" / "skill.md", SESSION_START)
    for domain in domains():
        shared = [t for t in plan.tools if t.domain == domain.name and t.owner is None]
        _write(root / "tools" / f"{domain.name}.py", module(f"Shared {domain.name} tools.", shared))
    for skill in plan.skills:
        folder = root / "skills" / skill.idea.skill_id
        _write(folder / "skill.md", skill_md(skill, plan, rng))
        _write(folder / "memory.yml", memory_yml(skill))
        _write(folder / "responses.yml", responses_yml(skill))
        own = [t for t in plan.tools if t.owner == skill.idea.skill_id]
        if own:
            _write(folder / "tools.py", module(f"Tools of {skill.idea.skill_id}.", own))
    _references(root)
    return plan


def _references(root: Path) -> None:
    for domain in domains()[:4]:
        sections = [
            f"# {domain.name.capitalize()} handbook\n\nHow Northwind handles {domain.record}s.",
            f"## Opening a {domain.record}\n\nA {domain.record} gets a reference starting with "
            f"NW when it is created. The reference never changes.",
            f"## Changing a {domain.record}\n\nChanges are possible until the {domain.record} "
            "is closed; some need a confirmation from the account owner.",
            f"## Closing a {domain.record}\n\nClosed {domain.record}s stay visible for two "
            "years, then are archived.",
        ]
        _write(root / "references" / f"{domain.name}.md", "\n\n".join(sections) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def generate(root: Path, seed: int = DEFAULT_SEED) -> Generated:
    """Write and load the project; raises `ValueError` listing the errors if any."""
    plan = write_project(root, seed)
    definition, diagnostics = load_project(root, env=ENV)
    if definition is None or has_errors(diagnostics):
        errors = "\n".join(d.render() for d in diagnostics if d.severity == "error")
        raise ValueError(f"the generated project does not load:\n{errors}")
    return Generated(root=root, plan=plan, definition=definition, warnings=tuple(diagnostics))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the project into")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    options = parser.parse_args(argv)
    made = generate(options.out, options.seed)
    tools = {name for s in made.definition.skills.values() for name in s.tools}
    folders = sum(1 for p in (options.out / "skills").iterdir() if p.is_dir())
    print(
        f"{options.out}: {folders} skills ({len(made.definition.skills)} with Keel's bundled "
        f"default_completed), {len(tools)} tools, 0 errors, {len(made.warnings)} warning(s)"
    )
    for warning in made.warnings:
        print(f"  {warning.render()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
