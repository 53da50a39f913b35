"""kubelet_sim tests run on the real in-process API (`real_api` in tests/conftest.py: ApiCore on
SQLite through LocalClient, one FakeClock for the API and the simulator); `cluster` is that fixture
under the name these tests use."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def cluster(real_api: Any) -> Any:
    return real_api
