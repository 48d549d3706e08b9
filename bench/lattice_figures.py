"""The lattice benchmark's figures (the paper's Figures 1-3) and its JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from lattice_config import RunOutcome

RESULTS = Path(__file__).resolve().parent / "results"
#: Plot floor for violations (zero cannot be drawn on a log axis).
VIOLATION_FLOOR = 1e-10



def _styled(ax, xlabel: str, ylabel: str, log_x: bool = True) -> None:
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)


def _objective_panel(ax, outcomes: list[RunOutcome], key: str, target: float,
                     limits: tuple[float, float]) -> None:
    """f(Π_g(w̄)) of each run's projected snapshots against ``key``."""
    for outcome in outcomes:
        points = [p for p in outcome.projected if p[key] > 0]
        ax.plot([p[key] for p in points], [p["projected_objective"] for p in points],
                marker="o", markersize=3, label=outcome.plan.name)
    ax.axhline(target, color="grey", linestyle="--", linewidth=1, label="exact optimum + 1%")
    ax.set_ylim(*limits)


def objective_limits(outcomes: list[RunOutcome], best: float) -> tuple[float, float]:
    """y-range showing every run's approach to the best objective."""
    finals = [o.projected[-1]["projected_objective"] for o in outcomes if o.projected]
    top = max(best + 0.3 * abs(best), 1.05 * max(finals, default=best))
    return best - 0.02 * abs(best), top


def figure_objective(outcomes, target, limits, path: Path) -> None:
    """Figure 1: objective vs iterations and vs constraint checks."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    _objective_panel(axes[0], outcomes, "iterations", target, limits)
    _styled(axes[0], "iterations", "f(Π_g(w̄))  (mean pairwise hinge)")
    _objective_panel(axes[1], outcomes, "checks", target, limits)
    _styled(axes[1], "constraint checks", "f(Π_g(w̄))")
    axes[1].legend(fontsize=8)
    fig.suptitle("Objective of the projected running average (cf. paper Figure 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure_constraints(outcomes: list[RunOutcome], path: Path) -> None:
    """Figure 2: violation and mean checks per iteration vs iterations."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for k, outcome in enumerate(outcomes):
        color, series = f"C{k}", outcome.series
        its = np.asarray(series["iterations"], dtype=float)
        keep = its > 0
        iterate = np.array([np.nan if v is None else max(v, VIOLATION_FLOOR)
                            for v in series["iterate_violation"]])
        axes[0].plot(its[keep], iterate[keep], color=color, alpha=0.3, linewidth=0.7)
        long = keep & (np.asarray(series["window"]) >= its / 3)
        average = np.maximum(np.asarray(series["violation"], dtype=float), VIOLATION_FLOOR)
        axes[0].plot(its[long], average[long], color=color, marker=".", markersize=3,
                     label=f"{outcome.plan.name} w̄")
        per_iteration = np.asarray(series["checks"], dtype=float) / np.maximum(its, 1.0)
        axes[1].plot(its[keep], per_iteration[keep], color=color, label=outcome.plan.name)
    axes[0].set_yscale("log")
    _styled(axes[0], "iterations", "max(0, max_i g_i)   (dots: w̄, faint: w(t))")
    axes[1].set_yscale("log")
    _styled(axes[1], "iterations", "constraint checks per iteration so far")
    axes[0].legend(fontsize=7)
    fig.suptitle("Constraint handling (cf. paper Figure 2). w̄: suffix averages spanning >= 1/3 "
                 f"of the run; violations floored at {VIOLATION_FLOOR:g}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure_time(outcomes, target, limits, path: Path) -> None:
    """Figure 3: objective vs wall time."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    _objective_panel(ax, outcomes, "seconds", target, limits)
    _styled(ax, "wall time, s (single thread)", "f(Π_g(w̄))")
    ax.legend(fontsize=8)
    ax.set_title("Objective vs wall time (cf. paper Figure 3)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)



def write_outputs(report: dict, outcomes: list[RunOutcome], best: float, target: float,
                  prefix: str) -> None:
    """The JSON and the three figures under ``bench/results``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS / f"{prefix}.json"
    json_path.write_text(json.dumps(report, indent=1, default=_json_default) + "\n")
    limits = objective_limits(outcomes, best)
    figure_objective(outcomes, target, limits, RESULTS / f"{prefix}_fig1.png")
    figure_constraints(outcomes, RESULTS / f"{prefix}_fig2.png")
    figure_time(outcomes, target, limits, RESULTS / f"{prefix}_fig3.png")
    print(f"wrote {json_path} and {prefix}_fig{{1,2,3}}.png in {report['total_s']:.0f} s")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | Path):
        return list(value) if isinstance(value, tuple) else str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
