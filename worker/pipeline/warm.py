"""Warm starts (``solver.warm_start``, docs/results.md "Warm starts"): which earlier Result,
and what of it a new run reuses.

Reused: the earlier mean as the first iterate w(1) (theta(1) for a network), the earlier
mixture's members as candidates of the shrinking LP, so the new mixture is never worse on
the new problem than the earlier one evaluated on it, where ``solver.gamma`` is automatic,
the earlier penalty ``stats.gamma`` as the first gamma of FullTouch, LightTouch, MidTouch and
projected SGD, and the linear games' end state (the Result's ``resume``: multipliers, the
theta-player's AdaGrad diameter and sum), which the same game resumes instead of measuring
its step again from a start that is already near a stationary point.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from worker.algorithms.run.options import SolverOptions
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import GameEnd, Trajectory
from worker.errors import SpecError
from worker.result import Result, Resume
from worker.spec.models import Spec
from worker.spec.warm_start import WarmStartJob

#: The candidates' kind of an earlier member.
WARM_KIND = "warm_start"


def warm_result(spec: Spec, earlier: Result | None) -> Result | None:
    """The Result a run starts from: ``earlier`` when the caller has it (the job
    ``solver.warm_start`` names, looked up by the queue; a sweep's neighbour), else the
    ``result`` file ``solver.warm_start`` names."""
    start = spec.solver.warm_start
    if earlier is not None or start is None:
        return earlier
    if isinstance(start, WarmStartJob):  # the caller had no earlier Result to give
        raise SpecError.at("solver.warm_start.job", "jobs are warm starts on the service; "
                           "in this process give {\"result\": \"RESULT.json\"}")
    path = Path(start.result)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SpecError.at("solver.warm_start.result", f"cannot read {path}: "
                           f"{error.strerror or error}") from None
    try:
        return Result.model_validate_json(text)
    except ValidationError:
        raise SpecError.at("solver.warm_start.result", f"{path} is not a Result JSON "
                           "(write one with lighttouch solve -o)") from None


def warm_options(options: SolverOptions, earlier: Result | None,
                 parameters: int) -> SolverOptions:
    """``options`` starting at the earlier mean (same number of ``parameters``, else a
    :class:`SpecError`)."""
    if earlier is None:
        return options
    given = len(earlier.mean.solution)
    if given != parameters:
        raise SpecError.at("solver.warm_start", f"the earlier result has {given} parameters "
                           f"and this problem {parameters}; a warm start needs the same "
                           "dimension (and model)")
    members = tuple(np.array(m.solution, dtype=np.float64) for m in earlier.mixture
                    if m.solution is not None)
    gamma = earlier.stats.get("gamma")
    return replace(options, start=np.array(earlier.mean.solution, dtype=np.float64),
                   warm_candidates=members,
                   start_gamma=float(gamma) if isinstance(gamma, int | float) and
                   not isinstance(gamma, bool) and gamma > 0 else None,
                   resume=game_end(earlier.resume))


def game_end(resume: Resume | None) -> GameEnd | None:
    """The runners' view of an earlier Result's ``resume``."""
    if resume is None:
        return None
    return GameEnd(resume.regret, np.array(resume.multipliers),
                   np.array(resume.log_weights, dtype=np.float64).reshape(
                       len(resume.multipliers), len(resume.multipliers)),
                   np.array(resume.log_multipliers), resume.theta_diameter,
                   resume.gradient_sum)


def with_warm_candidates(trajectory: Trajectory, options: SolverOptions) -> Trajectory:
    """``trajectory`` with the earlier members after its own candidates (once they are
    trimmed); the algorithm's own mixture (``baseline``) gives them weight 0."""
    if not options.warm_candidates:
        return trajectory
    earlier = Candidates()
    for solution in options.warm_candidates:
        earlier.add(solution, 0, WARM_KIND, 0, 0.0)
    baseline = None if trajectory.baseline is None else \
        np.concatenate([trajectory.baseline, np.zeros(len(options.warm_candidates))])
    return replace(trajectory, candidates=trajectory.candidates.joined(earlier),
                   baseline=baseline)
