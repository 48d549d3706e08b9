"""LightTouch engine: heavily constrained stochastic optimization, in process.

``from worker import solve`` — ``solve(spec, progress=None) -> Result`` (docs/architecture.md).
"""

from worker.kernel_cache import use_keyed_cache

use_keyed_cache()   # before any kernel is decorated: the cache cannot go stale

from worker.pipeline.solve import solve  # noqa: E402
from worker.result import Result  # noqa: E402
from worker.spec.models import Spec, parse_spec  # noqa: E402

__all__ = ["Result", "Spec", "parse_spec", "solve"]
