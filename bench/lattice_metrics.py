"""The lattice benchmark's metrics: crossings of the targets (the exact optimum + 1%, 0.1%, ...)
and the FullTouch / LightTouch comparisons of the paper's §6."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lattice_config import RunOutcome

#: Issue 2 targets (single thread, this machine).
TARGET_ITERATIONS_PER_S = 200_000
TARGET_CHECKS_RATIO = 10.0
#: "Reached" means within this relative distance of the exact optimum.
TOLERANCE = 0.01
#: Relative distances to the exact optimum at which crossings are also reported.
TOLERANCES = (0.001, 0.01, 0.02, 0.05, 0.10)



def crossing(points: list[dict], target: float, key: str) -> dict | None:
    """Where the projected objective first reaches ``target``, in ``key`` units.

    Returns
    -------
    dict or None
        ``first_snapshot`` (value of ``key`` at the first projected snapshot at or below the
        target) and ``interpolated`` (log-linear in ``key`` between that snapshot and the one
        before it); None if never reached.
    """
    for k, point in enumerate(points):
        if point["projected_objective"] > target:
            continue
        at = float(point[key])
        if k == 0:
            return {"first_snapshot": at, "interpolated": at}
        before = points[k - 1]
        x0, x1 = max(float(before[key]), 1e-12), max(at, 1e-12)
        f0, f1 = before["projected_objective"], point["projected_objective"]
        share = (f0 - target) / (f0 - f1) if f0 > f1 else 1.0
        return {"first_snapshot": at,
                "interpolated": math.exp(math.log(x0) + share * (math.log(x1) - math.log(x0)))}
    return None


def tolerance_key(tolerance: float) -> str:
    """JSON key of a tolerance, e.g. ``"1%"``, ``"0.1%"``."""
    return f"{tolerance:.1%}" if tolerance < 0.01 else f"{tolerance:.0%}"


def crossings(points: list[dict], best: float) -> dict:
    """Seconds, checks and iterations to within each of ``TOLERANCES`` of ``best``."""
    return {tolerance_key(tol): {key: crossing(points, best + tol * abs(best), key)
                                 for key in ("seconds", "checks", "iterations")}
            for tol in TOLERANCES}


def run_metrics(outcome: RunOutcome, best: float) -> dict:
    """Throughput, checks, final state and the time/checks/iterations to each target."""
    stats, series = outcome.stats, outcome.series
    iterations = max(int(stats["iterations"]), 1)
    final = outcome.projected[-1] if outcome.projected else {}
    return {
        "iterations": int(stats["iterations"]),
        "solve_s": stats["solve_s"],
        "iterations_per_s": stats["iterations"] / stats["solve_s"],
        "iterations_per_s_second_half": second_half_rate(series),
        "cpu_s": stats["cpu_s"],
        "cpu_share": stats["cpu_s"] / stats["solve_s"],
        "iterations_per_cpu_s": stats["iterations"] / max(stats["cpu_s"], 1e-9),
        "constraint_checks": int(stats["constraint_checks"]),
        "checks_per_iteration": stats["constraint_checks"] / iterations,
        "stopped_by_time_limit": bool(stats.get("stopped_by_time_limit", False)),
        "final_average_violation": series["violation"][-1] if series["violation"] else None,
        "final_iterate_violation": series["iterate_violation"][-1]
        if series["iterate_violation"] else None,
        "final_average_objective": final.get("objective"),
        "final_projected_objective": final.get("projected_objective"),
        "best_projected_objective": min((p["projected_objective"] for p in outcome.projected),
                                        default=None),
        "to_target": crossings(outcome.projected, best),
    }


def second_half_rate(series: dict) -> float | None:
    """Iterations per second over the second half of the run's snapshots (no start-up)."""
    its, secs = series["iterations"], series["seconds"]
    if len(its) < 4:
        return None
    half = len(its) // 2
    spent = secs[-1] - secs[half]
    return (its[-1] - its[half]) / spent if spent > 0 else None


def ratio(numerator: dict | None, denominator: dict | None, fallback: float | None) -> dict:
    """numerator / denominator of two :func:`crossing` results.

    When the numerator never reached the target, ``fallback`` (its total spent) over the
    denominator is a lower bound; None when the denominator never reached it.
    """
    if denominator is None:
        return {"value": None, "kind": "denominator never reached the target"}
    if numerator is None:
        if fallback is None:
            return {"value": None, "kind": "neither reached"}
        return {"value": fallback / denominator["interpolated"], "kind": "lower bound"}
    return {"value": numerator["interpolated"] / denominator["interpolated"],
            "kind": "interpolated",
            "first_snapshot_value": numerator["first_snapshot"] / denominator["first_snapshot"]}


def target_ratios(full: dict, light: dict, key: str) -> dict:
    """FullTouch/LightTouch checks and LightTouch/FullTouch seconds to the ``key`` target."""
    return {
        "checks_ratio_fulltouch_over_lighttouch": ratio(
            full["to_target"][key]["checks"], light["to_target"][key]["checks"],
            float(full["constraint_checks"])),
        "time_ratio_lighttouch_over_fulltouch": ratio(
            light["to_target"][key]["seconds"], full["to_target"][key]["seconds"],
            float(light["solve_s"])),
    }


def comparisons(metrics: dict[str, dict]) -> dict:
    """Issue 2's targets as ratios within this run, for every LightTouch variant.

    The headline is at ``TOLERANCE``; ``by_tolerance`` repeats the ratios at every entry of
    ``TOLERANCES`` (looser targets are crossed mid-run, not at the end of the budget).
    """
    full = metrics.get("fulltouch")
    out = {}
    for name, light in metrics.items():
        if not name.startswith("lighttouch") or full is None:
            continue
        headline = target_ratios(full, light, tolerance_key(TOLERANCE))
        checks = headline["checks_ratio_fulltouch_over_lighttouch"]["value"]
        times = headline["time_ratio_lighttouch_over_fulltouch"]["value"]
        out[name] = {
            "iterations_per_s": light["iterations_per_s"],
            "iterations_per_s_target": TARGET_ITERATIONS_PER_S,
            "iterations_per_s_met": light["iterations_per_s"] >= TARGET_ITERATIONS_PER_S,
            **headline,
            "checks_ratio_met": checks is not None and checks >= TARGET_CHECKS_RATIO,
            "time_no_worse_met": times is not None and times <= 1.0,
            "by_tolerance": {tolerance_key(tol): target_ratios(full, light, tolerance_key(tol))
                             for tol in TOLERANCES},
        }
    return out
