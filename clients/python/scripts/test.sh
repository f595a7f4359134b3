#!/usr/bin/env bash
# The Python client's test command: sets up clients/python/.venv by itself (pinned
# requirements), then runs pytest (unit, real loopback HTTP/HTTPS, mypy --strict,
# wheel packaging). Conformance runs separately via `npx tsx conformance/run.ts`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/venv.sh"
cd "$here"
status=0
# pytest's tmp_path folders go in a folder of this run's own, removed afterwards (by default
# pytest keeps them in the temp dir as pytest-of-<user>).
basetemp="$(mktemp -d)"
trap 'rm -rf "$basetemp"' EXIT
"$here/.venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$basetemp" "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: the Python client suite is missing" >&2
fi
exit "$status"
