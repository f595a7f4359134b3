#!/usr/bin/env bash
# Create or refresh clients/python/.venv: pinned dev requirements plus this package
# (editable, so tests and the conformance driver see the working tree). Reinstalls only
# when requirements-dev.txt or pyproject.toml changed since the last run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
stamp="$venv/.agenticdriver-stamp"
want="$(cat "$here/requirements-dev.txt" "$here/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-dev.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$here[async]"
echo "$want" > "$stamp"
