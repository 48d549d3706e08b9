"""LightTouch engine: heavily constrained stochastic optimization, in process.

``from worker import solve`` — ``solve(spec, progress=None) -> Result`` (docs/architecture.md).
"""

from worker.pipeline.solve import solve
from worker.result import Result
from worker.spec.models import Spec, parse_spec

__all__ = ["Result", "Spec", "parse_spec", "solve"]
