"""Conversation tests: YAML files of scripted conversations with expectations (`keel test`).

    from keel.testing.conversation import run_paths
    summary = run_paths([Path("tests/conversations")], make_harness)
    print("\\n".join(summary.lines())); raise SystemExit(summary.exit_code)

The file format is documented in `docs/testing.md`. Modules: `spec` (parsed values),
`parse` / `parse_checks` (YAML to values, diagnostics), `assertions` and `matching` (pure
checks), `runner` (playing tests against a harness), `results`, `discover`.
"""

from keel.testing.conversation.assertions import Observation, check_bot, check_one, run_checks
from keel.testing.conversation.discover import find_test_files
from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.results import CaseResult, FileResult, Summary
from keel.testing.conversation.runner import (
    HarnessFactory,
    arun_paths,
    arun_test_file,
    run_case,
    run_file,
    run_paths,
    run_test_file,
)
from keel.testing.conversation.spec import ConversationCase, ConversationFile

__all__ = [
    "CaseResult",
    "ConversationCase",
    "ConversationFile",
    "FileResult",
    "HarnessFactory",
    "Observation",
    "Summary",
    "arun_paths",
    "arun_test_file",
    "check_bot",
    "check_one",
    "find_test_files",
    "parse_test_file",
    "run_case",
    "run_checks",
    "run_file",
    "run_paths",
    "run_test_file",
]
