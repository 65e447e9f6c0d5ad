#!/usr/bin/env bash
# The peer benchmark in one command (see run.py for the options):
#
#   bash bench/peers/run.sh --write bench/RESULTS.md
#
# Creates bench/peers/.venv on first use (setup.sh), then runs run.py with it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$HERE/setup.sh"
exec "$HERE/.venv/bin/python" "$HERE/run.py" "$@"
