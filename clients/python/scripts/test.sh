#!/usr/bin/env bash
# The Python client's test command: sets up clients/python/.venv by itself (pinned
# requirements), then runs pytest (unit, real loopback HTTP/HTTPS, mypy --strict,
# wheel packaging). Conformance runs separately via `npx tsx conformance/run.ts`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/venv.sh"
cd "$here"
status=0
"$here/.venv/bin/python" -m pytest -q -p no:cacheprovider "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: the Python client suite is missing" >&2
fi
exit "$status"
