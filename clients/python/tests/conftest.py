from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from hosts import Pki, ScriptedHost, make_pki
from live import LiveHost, start_live_host


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), "host")


@pytest.fixture(scope="session")
def other_pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("other-pki"), "other")


@pytest.fixture
def host() -> Iterator[ScriptedHost]:
    started = ScriptedHost().start()
    yield started
    started.stop()


@pytest.fixture
def tls_host(pki: Pki) -> Iterator[ScriptedHost]:
    started = ScriptedHost().start(tls=pki)
    yield started
    started.stop()


@pytest.fixture
def project_dir() -> Path:
    return Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", params=["http", "https"])
def live_host(request: pytest.FixtureRequest, pki: Pki) -> Iterator[LiveHost]:
    """The real host over loopback HTTP, then over HTTPS verified against the throwaway CA."""
    started = start_live_host(pki if request.param == "https" else None)
    yield started
    started.stop()
