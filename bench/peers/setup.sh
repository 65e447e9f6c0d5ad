#!/usr/bin/env bash
# Creates bench/peers/.venv (git-ignored) with Keel (editable, from the repo root) and the
# peers pinned in requirements.txt. Safe to run again: it reinstalls only when
# requirements.txt or pyproject.toml changed since the last successful install.
#
#   bash bench/peers/setup.sh            # PYTHON=python3.11 bash bench/peers/setup.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.installed"
WANT="$(cat "$HERE/requirements.txt" "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  exit 0
fi
# This machine's pip config lists extra local indexes that lack most packages; pip warns
# about each one it skips. The warnings are dropped, anything else is shown.
quiet() { "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }

test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
quiet "$VENV/bin/python" -m pip install --quiet --upgrade pip
quiet "$VENV/bin/python" -m pip install --quiet -e "$ROOT"
quiet "$VENV/bin/python" -m pip install --quiet -r "$HERE/requirements.txt"
"$VENV/bin/python" -m pip check || echo "setup.sh: pip check reports conflicts (above)" >&2
echo "$WANT" > "$STAMP"
"$VENV/bin/python" -m pip freeze --exclude-editable \
  | grep -i -E '^(langgraph|langchain-core|openai-agents|openai|pydantic-ai-slim|pydantic|fastjsonschema)==' >&2
