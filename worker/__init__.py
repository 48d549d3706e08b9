"""LightTouch engine: heavily constrained stochastic optimization, in process.

``from worker import solve`` — ``solve(spec, progress=None) -> Result`` (docs/architecture.md).
The names are loaded on first use, so importing a leaf module (``worker.result``,
``worker.spec``) does not load the solver.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from worker.kernel_cache import use_keyed_cache

use_keyed_cache()   # before any kernel is decorated: the cache cannot go stale

if TYPE_CHECKING:
    from worker.pipeline.solve import solve
    from worker.result import Result
    from worker.spec.models import Spec, parse_spec

#: Each public name's module.
_HOMES = {"solve": "worker.pipeline.solve", "Result": "worker.result",
          "Spec": "worker.spec.models", "parse_spec": "worker.spec.models"}

__all__ = ["Result", "Spec", "parse_spec", "solve"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'worker' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
