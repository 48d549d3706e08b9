"""The job page of a calibrated model in headless Chromium against a real API, worker and
Redis: a chart of each calibrator and, for a lattice, of each input's partial dependence."""

from __future__ import annotations

import base64

import numpy as np
from playwright.sync_api import Page, expect

from service.local_stack import Stack
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import Console, screenshot, sign_in


def lattice_spec() -> dict:
    """A small calibrated lattice whose table is inline csv."""
    rng = np.random.default_rng(0)
    rows = ["rating,distance,clicked"]
    for _ in range(300):
        rating, distance = rng.uniform(1, 5), rng.exponential(4)
        clicked = 1 if rating - 0.3 * distance + rng.normal() > 2 else -1
        rows.append(f"{rating:.2f},{distance:.2f},{clicked}")
    payload = base64.b64encode("\n".join(rows).encode()).decode()
    return {"bounds": {"lower": -5, "upper": 5},
            "model": {"type": "calibrated_lattice", "lattice": {"sizes": [3, 2]}, "features": [
                {"column": "rating", "keypoints": [1, 3, 5], "monotonic": "increasing"},
                {"column": "distance", "keypoints": [0, 10], "monotonic": "decreasing"}]},
            "objective": {"type": "empirical_risk", "loss": "logistic", "data": {
                "table": {"uri": f"data:text/csv;base64,{payload}"}, "label": "clicked"}},
            "solver": {"iterations": 5000}}


def test_a_calibrated_lattice_job_draws_its_calibrators_and_partial_dependence(
        page: Page, service: Stack, console: Console):
    with service.client("alpha") as client:
        job_id = submit(client, lattice_spec())
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")
    expect(page.get_by_role("heading", name="Partial dependence")).to_be_visible()
    for name, points in [("calibrator-0", 3), ("calibrator-1", 2), ("partial-0", 3),
                         ("partial-1", 2)]:
        chart = page.locator(f"[data-chart={name}]")
        expect(chart).to_have_attribute("data-points", str(points))
    screenshot(page, "calibrated_lattice_job")
    assert console.errors == []
