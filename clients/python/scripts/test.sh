#!/usr/bin/env bash
# The Python client's test command: sets up clients/python/.venv by itself (pinned
# requirements), then runs pytest (unit, real loopback HTTP/HTTPS, mypy --strict, the sdist
# and wheel built, checked with twine and installed into a fresh venv). Each step names itself
# when it fails. Conformance runs separately via `npx tsx conformance/run.ts`.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps_label=python
. "$here/../../scripts/lib/steps.sh"
step_or_stop "virtual environment (clients/python/.venv, pinned requirements-dev.txt)" "$here/scripts/venv.sh"
cd "$here"
# pytest's tmp_path folders go in a folder of this run's own, removed afterwards (by default
# pytest keeps them in the temp dir as pytest-of-<user>).
basetemp="$(mktemp -d)"
trap 'rm -rf "$basetemp"' EXIT
pytest() {
  "$here/.venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$basetemp" "$@"
  local status=$?
  if [ "$status" -eq 5 ]; then echo "pytest collected no tests: the Python client suite is missing" >&2; fi
  return "$status"
}
step "pytest (unit, loopback HTTP/HTTPS, mypy --strict, packaging)" pytest "$@"
finish
