"""What the games promise (docs/rates.md#what-the-games-promise), on UCI Adult with the four
equal-opportunity constraints TPR(G) >= s TPR(all) (female, male, black, white), hinge loss,
the proxy-Lagrangian with ``iterations: "auto"``: a sweep over ``constraints[*].rhs.scale``
in (0.85, 0.9, 0.95), each point warm-started from the one before, and a cold solve of each
warm point's level for comparison. Per point: iterations, objective, largest expected
violation, the verdict and ``stopped_by``.

Writes bench/results/game_promises.json.

Run: ``PYTHONPATH=. .venv/bin/python bench/game_promises.py [SEED ...]`` (default seeds 0 and
3; about 10 seconds a seed)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from worker import solve
from worker.datasets.adult import adult_spec, load_adult

RESULTS = Path(__file__).resolve().parent / "results" / "game_promises.json"
SCALES = (0.85, 0.9, 0.95)


def point(result) -> dict:
    """The figures of one Result."""
    return {"iterations": result.stats["iterations"], "stopped_by": result.stats["stopped_by"],
            "objective": result.expected.objective,
            "max_violation": result.expected.max_violation,
            "feasible": result.feasibility.feasible,
            "theta_diameter": result.stats.get("theta_diameter")}


def seed_run(spec: dict, directory: Path) -> list[dict]:
    """The sweep's points, each with the cold solve of its level."""
    swept = dict(spec, sweep={"path": "constraints[*].rhs.scale", "values": list(SCALES)})
    rows = []
    for swept_point in solve(swept, roots=[directory]).sweep.points:
        cold = json.loads(json.dumps(spec))
        for constraint in cold["constraints"]:
            constraint["rhs"]["scale"] = swept_point.value
        rows.append({"scale": swept_point.value, "sweep": point(swept_point.result),
                     "cold": point(solve(cold, roots=[directory]))})
    return rows


def main() -> None:
    seeds = [int(seed) for seed in sys.argv[1:]] or [0, 3]
    train, _ = load_adult()
    found = {}
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        for seed in seeds:
            spec = adult_spec(train, directory, algorithm="proxy_lagrangian",
                              iterations=0, seed=seed)
            spec["solver"]["iterations"] = "auto"
            found[str(seed)] = rows = seed_run(spec, directory)
            for row in rows:
                print(f"seed {seed} scale {row['scale']}: sweep {row['sweep']}\n"
                      f"{'':18}cold  {row['cold']}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"scales": SCALES, "seeds": found}, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
