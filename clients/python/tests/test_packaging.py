"""Build the sdist and the wheel, check them as PyPI would (twine), install the wheel into a
fresh virtual environment and use it against a host."""
from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

from hosts import TOKEN, ScriptedHost, good_events, sse

APP = """
import sys
import agenticdriver
from agenticdriver import AgenticClient, AsyncAgenticClient

assert "site-packages" in agenticdriver.__file__, agenticdriver.__file__
try:
    import httpx  # noqa: F401
    raise SystemExit("httpx must not be installed without the async extra")
except ImportError:
    pass
try:
    AsyncAgenticClient(sys.argv[1], sys.argv[2])
    raise SystemExit("AsyncAgenticClient must need the async extra")
except ImportError as error:
    assert "agenticdriver[async]" in str(error), error
with AgenticClient(sys.argv[1], sys.argv[2]).stream({"provider": "mock", "model": "demo", "input": "Hello"}) as events:
    print("".join(e["text"] for e in events if e["type"] == "text.delta"))
"""


def test_wheel_installs_alone_and_runs_against_a_host(project_dir: Path, tmp_path: Path, host: ScriptedHost) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(project_dir)],
        capture_output=True, text=True, check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("agenticdriver-0.1.0-py3-none-any.whl")
    (sdist,) = dist.glob("agenticdriver-0.1.0.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agenticdriver/py.typed" in names and "agenticdriver/_sync.py" in names
    assert not [name for name in names if name.startswith("tests/") or "conftest" in name]
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert "agenticdriver-0.1.0/pyproject.toml" in members and "agenticdriver-0.1.0/README.md" in members
    assert "agenticdriver-0.1.0/src/agenticdriver/py.typed" in members
    # What PyPI checks on upload: metadata, and that the README renders as the long description.
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    venv.create(tmp_path / "app", with_pip=True)
    python = str(tmp_path / "app" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)], check=True, capture_output=True)
    host.routes["runs"] = lambda x: x.stream(sse(good_events("Hello from the wheel")))
    ran = subprocess.run([python, "-c", APP, host.url, TOKEN], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Hello from the wheel"
