"""The real agenticdriver host (``conformance/live-host-process.ts``) as a child process for the client tests."""
from __future__ import annotations

import json
import secrets
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hosts import Pki

LAUNCHER = Path("conformance") / "live-host-process.ts"
REPOSITORY = Path(__file__).resolve().parents[3]
START_SECONDS = 60


@dataclass
class LiveHost:
    url: str
    token: str
    ca_file: Optional[str]
    process: "subprocess.Popen[str]"

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_live_host(pki: Optional[Pki]) -> LiveHost:
    """Start the host (HTTPS with ``pki``'s certificate when given) and wait for its URL."""
    token = secrets.token_hex(24)
    options = {"main": token, "restricted": secrets.token_hex(24)}
    if pki is not None:
        options.update(certFile=pki.cert, keyFile=pki.key)
    # A file, not a pipe: an unread pipe could fill up and stall the host's logging.
    errors = tempfile.TemporaryFile("w+")
    process = subprocess.Popen(
        ["node", "--import", "tsx", str(LAUNCHER), json.dumps(options)],
        cwd=REPOSITORY, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True,
    )
    watchdog = threading.Timer(START_SECONDS, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            process.wait()
            errors.seek(0)
            raise RuntimeError(f"the live host did not start: {errors.read()}")
    finally:
        watchdog.cancel()
        errors.close()
    return LiveHost(json.loads(line)["url"], token, pki.ca if pki else None, process)
