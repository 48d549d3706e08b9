"""The job page of a calibrated model in headless Chromium against a real API, worker and
Redis: a chart of each calibrator and, for a lattice, of each input's partial dependence."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.local_stack import Stack
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import Console, screenshot, sign_in
from tests.tables.raw import inline_lattice_spec


def test_a_calibrated_lattice_job_draws_its_calibrators_and_partial_dependence(
        page: Page, service: Stack, console: Console):
    with service.client("alpha") as client:
        job_id = submit(client, inline_lattice_spec())
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


def test_a_categorical_lattice_input_draws_its_partial_dependence_by_category(
        page: Page, service: Stack, console: Console):
    with service.client("alpha") as client:
        job_id = submit(client, inline_lattice_spec(with_category=True))
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")
    expect(page.get_by_role("heading", name="Partial dependence")).to_be_visible()
    expect(page.locator("[data-chart=partial-2]")).to_have_attribute("data-points", "3")
    expect(page.locator("[data-chart=partial-2]")).to_contain_text("diner, cafe, bar")
    assert console.errors == []
