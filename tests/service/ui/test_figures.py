"""The dashboard shows a succeeded job's Result figures, not its last progress report, on the
job page (its line and its chart) and in the jobs list, and writes a certified gap as the CLI
does (figures.js against service/progress.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from service.progress import gap_text
from tests.local_stack import Stack
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import screenshot, sign_in
from tests.service.ui.test_dashboard import progress_events
from tests.specs import short_fairness_spec
from worker.result import Result


@pytest.fixture(scope="module")
def finished(service: Stack) -> tuple[str, Result, dict]:
    """A succeeded job whose last progress report's violation is far from its Result's: its
    id, its Result and that last report."""
    with service.client("alpha") as client:
        job_id = submit(client, short_fairness_spec())
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
        result = Result.model_validate_json(client.get(f"/v1/jobs/{job_id}/result").content)
        last_report = client.get(f"/v1/jobs/{job_id}").json()["last_progress"]
    assert last_report["max_violation"] > 1e6 * result.expected.max_violation
    return job_id, result, last_report


def shown(page: Page, value: float) -> str:
    """``value`` as the dashboard writes a number (dom.js ``num``)."""
    return page.evaluate("async (v) => (await import('/ui/js/dom.js')).num(v)", value)


def test_the_job_page_ends_on_the_results_figures(page: Page, service: Stack,
                                                  finished: tuple[str, Result, dict]):
    job_id, result, last_report = finished
    reports = progress_events(service, job_id)
    sign_in(page)
    page.goto(f"/ui/#/jobs/{job_id}")

    latest = page.locator(".latest")
    expect(latest).to_contain_text(
        f"expected max violation {shown(page, result.expected.max_violation)}")
    expect(latest).to_contain_text(f"objective {shown(page, result.expected.objective)}")
    verdict = "feasible" if result.feasibility.feasible else "NOT feasible"
    expect(latest).to_contain_text(
        f"Result: {verdict} (tolerance {shown(page, result.feasibility.tolerance)})")
    expect(latest).not_to_contain_text(shown(page, last_report["max_violation"]))
    expect(latest).to_have_attribute("data-reports", str(reports))
    # every report on the running average's line, then the Result as one dot
    expect(page.locator("[data-chart=violation]")).to_have_attribute("data-points",
                                                                     str(reports + 1))
    expect(page.locator("[data-chart=violation] circle.dot")).to_have_count(1)
    screenshot(page, "job-finished")


def test_the_jobs_list_shows_the_results_violation(page: Page,
                                                   finished: tuple[str, Result, dict]):
    job_id, result, last_report = finished
    sign_in(page)
    row = page.locator("tbody tr", has=page.get_by_label(f"compare {job_id}"))
    expect(row).to_have_count(1)
    headings = page.locator("thead th").all_inner_texts()
    cell = row.locator("td").nth(headings.index("max violation"))

    expect(cell).to_have_text(shown(page, result.expected.max_violation))
    expect(row.locator("td").nth(headings.index("objective"))).to_have_text(
        shown(page, result.expected.objective))
    assert shown(page, last_report["max_violation"]) != cell.inner_text()


def test_a_gap_reads_the_same_on_the_dashboard_and_in_the_cli(page: Page):
    sign_in(page)
    gaps = [0.0037, 0.5, 1.546e-10, 2.4e-13, 9.9e-5, 1e-4, 0.0, -1e-15]
    written = page.evaluate("async (gaps) => { const { gapText } = await import("
                            "'/ui/js/figures.js'); return gaps.map((gap) => gapText(gap)); }",
                            gaps)
    assert written == [gap_text(gap) for gap in gaps]
