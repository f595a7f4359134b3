"""``mypy --strict`` over the package and over typed consumers of it."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TYPING = Path(__file__).parent / "typing"


def mypy(*targets: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *targets],
        cwd=cwd, capture_output=True, text=True, check=False,
    )


def test_package_and_a_typed_consumer_pass_strict(project_dir: Path) -> None:
    checked = mypy("src/agenticdriver", str(TYPING / "typed_app.py"), "examples/quickstart.py", cwd=project_dir)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_typing_mistakes_are_reported_on_each_marked_line(project_dir: Path) -> None:
    wrong = TYPING / "wrong_app.py"
    checked = mypy(str(wrong), cwd=project_dir)
    assert checked.returncode == 1
    marked = {number for number, line in enumerate(wrong.read_text().splitlines(), 1) if "# E:" in line}
    reported = {int(match) for match in re.findall(r"wrong_app\.py:(\d+): error", checked.stdout)}
    assert reported == marked, checked.stdout
