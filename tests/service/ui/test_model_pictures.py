"""The job page of a calibrated model in headless Chromium against a real API, worker and
Redis: a chart of each calibrator and, for a lattice, of each input's partial dependence; a
categorical input drawn as one bar per category whose labels fit, at desktop and phone
width."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.local_stack import Stack
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import Console, screenshot, sign_in
from tests.tables.raw import inline_lattice_spec

#: Each bar label's box against its chart's box, and whether the label's text overflows it.
LABEL_BOXES = """(chart) => {
    const outer = chart.getBoundingClientRect();
    return [...chart.querySelectorAll('.bar-label')].map((label) => {
        const box = label.getBoundingClientRect();
        return {text: label.textContent, inside: box.left >= outer.left
            && box.right <= outer.right && box.top >= outer.top
            && box.bottom <= outer.bottom && box.width > 0,
            clipped: label.scrollWidth > label.clientWidth};
    });
}"""


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


def test_a_categorical_input_is_drawn_as_bars_whose_labels_fit_on_a_phone(
        page: Page, service: Stack, console: Console):
    with service.client("alpha") as client:
        job_id = submit(client, inline_lattice_spec(with_category=True))
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")
    expect(page.get_by_role("heading", name="Partial dependence")).to_be_visible()
    calibrator = page.locator("[data-chart=calibrator-2]")
    partial = page.locator("[data-chart=partial-2]")
    expect(calibrator.locator(".bars li")).to_have_count(3)
    expect(calibrator.locator(".bar-label")).to_have_text(["bar", "cafe", "diner"])
    expect(calibrator.locator(".bar-value")).to_have_text(["2", "1", "0"])
    expect(partial.locator(".bar-label")).to_have_text(["diner", "cafe", "bar"])
    assert calibrator.locator("path.line").count() == 0
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 844})
        for chart in (calibrator, partial):
            labels = chart.evaluate(LABEL_BOXES)
            assert len(labels) == 3
            assert all(label["inside"] and not label["clipped"] for label in labels), labels
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, "categorical_lattice_job-phone")
    assert console.errors == []
