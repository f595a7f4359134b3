from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from hosts import Pki, ScriptedHost, make_pki


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
