"""A real LocalCluster of two worker processes, shared by a test module."""

from __future__ import annotations

import distributed
import pytest


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local
