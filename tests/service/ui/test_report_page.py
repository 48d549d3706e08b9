"""The job page of a sweep with validation data in headless Chromium against a real API,
worker and Redis: the verdict first, then the convergence chart, the constraints tables
(training vs validation, interval bars on rates) folded under a line each, and the front
drawn with each point linked to its model; a screenshot in tests/artifacts/. A group loss's
row shows its mean loss beside its bound."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.local_stack import Stack
from tests.problem.test_rates import rate_spec, term
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import screenshot, sign_in

VALUES = [0.3, 0.4, 0.5]


@pytest.fixture(scope="module")
def sweep_job(service: Stack) -> str:
    spec = rate_spec([{"type": "rate", "lhs": term("positive_prediction_rate", "a"),
                       "op": ">=", "rhs": 0.3}], iterations=600)
    spec["validation"] = {"fraction": 0.25, "seed": 0}
    spec["sweep"] = {"path": "constraints[0].rhs", "values": VALUES}
    with service.client("alpha") as client:
        job_id = submit(client, spec)
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
    return job_id


def test_the_page_leads_with_the_verdict_then_the_chart_and_folds_the_constraints(
        page: Page, sweep_job: str):
    sign_in(page)
    page.goto(f"/ui/#/jobs/{sweep_job}")
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict).to_contain_text("easible")
    expect(verdict.locator(".objective")).to_contain_text("expected objective")
    constraints = page.get_by_role("region", name="Constraints")
    models = constraints.locator(":scope > details")
    expect(models).to_have_count(3)     # mixture, mean and deterministic, each folded
    for k in range(3):
        expect(models.nth(k)).not_to_have_attribute("open", "")
        expect(models.nth(k).locator("summary")).to_contain_text(
            re.compile(r"1 constraint, (all within tolerance on training and validation"
                       r"|beyond tolerance: constraints\[0\] on (training|validation))"))
    mixture = models.filter(has_text="randomized classifier")
    expect(mixture.locator("table")).to_be_hidden()
    mixture.locator("summary").click()
    table = mixture.locator("table")
    expect(table).to_be_visible()
    expect(table.locator("thead")).to_contain_text("validation")
    expect(table).to_contain_text("constraints[0] rate")
    expect(table).to_contain_text("positive_prediction_rate(a)")
    assert table.locator(".bar .interval").count() >= 1     # validation rates only
    tops = page.evaluate("""() => {
        const top = (node) => node.getBoundingClientRect().top;
        return {verdict: top(document.querySelector('.verdict')),
                chart: top(document.querySelector('[data-chart=objective]')),
                folded: Math.min(...[...document.querySelectorAll('main details')].map(top))};
    }""")
    assert tops["verdict"] < tops["chart"] < tops["folded"], tops


def test_the_front_is_drawn_and_links_each_point_to_its_model(page: Page, sweep_job: str):
    sign_in(page)
    page.goto(f"/ui/#/jobs/{sweep_job}")
    front = page.get_by_role("region", name="Front")
    expect(front.locator(".front-chart canvas")).to_have_count(1)
    expect(front.locator(".uplot .u-legend")).to_contain_text("validation error")
    links = front.locator("a.point-link")
    expect(links).to_have_count(len(VALUES))
    point = front.locator("#point-2")
    expect(point).not_to_have_attribute("open", "")
    links.nth(2).click()
    expect(point).to_have_attribute("open", "")
    expect(point.locator(":scope > summary")).to_contain_text("constraints[0].rhs = 0.5")
    expect(point.get_by_role("region", name="Constraints")).to_contain_text("validation")
    screenshot(page, "job_sweep_report")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("document.querySelector('.front-chart canvas')"
                           ".getBoundingClientRect().right <= 390")   # redrawn at its width
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "job_sweep_report-phone")


def test_a_certified_gap_is_shown_in_the_verdict(page: Page, service: Stack):
    from tests.specs import random_spec

    spec = random_spec("hinge", "ordering_chain", 1, iterations=3000)
    spec["bounds"] = {"lower": -1, "upper": 1}
    with service.client("alpha") as client:
        job_id = submit(client, spec)
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
        gap = client.get(f"/v1/jobs/{job_id}/result").json()["stats"]["relative_gap"]
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict).to_contain_text("Feasible")
    expect(verdict.locator(".gap")).to_contain_text("certified: within")
    assert gap < 1e-3


def test_a_group_loss_shows_its_mean_loss_beside_its_bound(page: Page, service: Stack):
    spec = rate_spec([{"type": "group_loss", "group": "a", "loss": "logistic", "rhs": 0.55}],
                     loss="logistic", algorithm="auto")
    with service.client("alpha") as client:
        job_id = submit(client, spec)
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")
    mixture = page.get_by_role("region", name="Constraints").locator(
        ":scope > details").filter(has_text="randomized classifier")
    mixture.locator("summary").click()
    table = mixture.locator("table")
    expect(table).to_contain_text("constraints[0] group_loss")
    expect(table).to_contain_text(re.compile(r"mean logistic\(a\), n = \d+, bound 0\.55"))
