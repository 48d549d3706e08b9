"""The web dashboard in headless Chromium against a real API, worker and Redis: sign in,
submit, watch a job converge live (resuming after the API restarts), cancel, compare, tenancy,
a bad spec's JSON path; every page at phone width; screenshots of every page in
tests/artifacts/."""

from __future__ import annotations

import json
import re

import httpx
import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.local_stack import REPO, RedisServer, Stack, small_spec, wait_for
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import Console, screenshot, sign_in

EXAMPLE = REPO / "examples" / "constrained_qp.json"


def reports(page: Page) -> int:
    """How many progress reports the job page has drawn."""
    return int(page.locator(".latest").get_attribute("data-reports") or 0)


def wait_reports(page: Page, more_than: int) -> int:
    """Wait until the job page has drawn more than ``more_than`` progress reports; how many."""
    return wait_for(lambda: reports(page) > more_than and reports(page), 60,
                    f"more than {more_than} progress reports on the job page")


def progress_events(stack: Stack, job_id: str) -> int:
    with stack.redis() as redis:
        return sum(fields[b"event"] == b"progress"
                   for _, fields in redis.xrange(f"lighttouch:events:{job_id}"))


@pytest.fixture(scope="module")
def finished(service: Stack) -> list[str]:
    """Two succeeded jobs of tenant alpha (different seeds)."""
    with service.client("alpha") as client:
        ids = [submit(client, small_spec(iterations=20000, seed=seed)) for seed in (1, 2)]
        for job_id in ids:
            wait_status(client, job_id, {"succeeded"})
    return ids


def test_dashboard_responses_carry_a_strict_policy(service: Stack):
    with httpx.Client(base_url=service.url) as client:
        redirect = client.get("/ui")
        for path in ("/ui/", "/ui/js/app.js", "/ui/app.css"):
            headers = client.get(path).headers
            policy = headers["content-security-policy"]
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "unsafe-inline" not in policy and headers["x-content-type-options"] == "nosniff"
    assert redirect.status_code == 307 and redirect.headers["location"] == "/ui/"


def test_open_dev_mode_needs_no_key(redis_server: RedisServer, browser: Browser,
                                    console: Console, tmp_path):
    stack = Stack(redis_server.url(8), tmp_path, {"LIGHTTOUCH_API_KEYS": ""})
    stack.start_api()
    try:
        assert httpx.get(f"{stack.url}/healthz").json()["api_key_required"] is False
        context = browser.new_context(base_url=stack.url)
        page = context.new_page()
        page.on("console", console.record)
        page.goto("/ui/")
        expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
        expect(page.locator("#account")).to_have_text("open dev mode")
        context.close()
    finally:
        stack.close()
    assert console.errors == []


def test_an_uploaded_example_validates_submits_and_succeeds_with_its_result(page: Page,
                                                                            tmp_path):
    spec = json.loads(EXAMPLE.read_text())
    spec["solver"]["iterations"] = 20000
    (tmp_path / "qp.json").write_text(json.dumps(spec))
    sign_in(page)
    page.get_by_role("link", name="Submit").click()
    page.get_by_label("…or upload a spec file").set_input_files(tmp_path / "qp.json")
    expect(page.get_by_label("Problem spec (JSON)")).not_to_be_empty()
    page.get_by_role("button", name="Validate").click()
    # validation reads and compiles the data in a child process: slow on a loaded machine
    expect(page.get_by_role("status")).to_contain_text("The spec is valid", timeout=60_000)
    screenshot(page, "submit")
    page.get_by_role("button", name="Submit").click()

    expect(page.locator(".status")).to_contain_text("succeeded", timeout=120_000)
    expect(page.locator(".job-name")).to_contain_text("QP with")
    expect(page.get_by_role("region", name="Verdict")).to_contain_text("expected objective")
    expect(page.get_by_role("heading", name="Mixture")).to_be_visible()
    projection = page.locator("details", has=page.locator("summary", has_text="Projection"))
    expect(projection.locator(".facts")).to_be_hidden()
    projection.locator("summary").click()
    expect(projection.locator(".facts")).to_contain_text("method")
    assert int(page.locator("[data-chart=objective]").get_attribute("data-points")) > 0
    with page.expect_download() as result:
        page.get_by_role("button", name="Download Result JSON").click()
    with page.expect_download() as solution:
        page.get_by_role("button", name="Download solution.npy").click()
    assert json.loads(result.value.path().read_text())["status"] == "succeeded"
    assert np.load(solution.value.path()).shape == (60,)
    screenshot(page, "job")


def test_a_running_job_draws_live_resumes_after_a_drop_and_is_cancelled(
        page: Page, service: Stack, console: Console):
    sign_in(page)
    page.get_by_role("link", name="Submit").click()
    page.get_by_label("Problem spec (JSON)").fill(json.dumps(
        small_spec(iterations=10**9, time_limit_s=600)))
    page.get_by_role("button", name="Submit").click()
    before_drop = wait_reports(page, 1)
    wait_reports(page, before_drop)
    screenshot(page, "job-running")

    service.stop_api()
    expect(page.locator(".connection")).to_contain_text("reconnecting")
    after_drop = reports(page)
    service.start_api()
    expect(page.locator(".connection")).to_be_empty()
    wait_reports(page, after_drop)
    page.get_by_role("button", name="Cancel job").click()

    expect(page.locator(".status")).to_contain_text("cancelled")
    job_id = page.url.rsplit("/", 1)[1]
    assert reports(page) == progress_events(service, job_id)   # each event exactly once
    console.expect(r"net::ERR_(CONNECTION_REFUSED|EMPTY_RESPONSE|CONNECTION_RESET"
                   r"|INCOMPLETE_CHUNKED_ENCODING)")


def test_two_finished_jobs_compare_on_one_chart(page: Page, finished: list[str]):
    sign_in(page)
    page.get_by_role("link", name="Compare").click()
    for job_id in finished:
        page.get_by_label(f"compare {job_id}").check()
    page.get_by_role("button", name="Compare").click()

    expect(page.locator(".legend li")).to_have_count(2)
    expect(page.locator("[data-chart=objective] path.line")).to_have_count(2)
    expect(page.locator("[data-chart=violation] path.line")).to_have_count(2)
    page.get_by_label("solver time (s)").check()
    expect(page.locator("[data-chart=objective] path.line")).to_have_count(2)
    screenshot(page, "compare")


def test_the_jobs_page_shows_new_jobs_live_filters_by_keyboard_and_fits_a_phone(
        page: Page, service: Stack, finished: list[str]):
    sign_in(page)
    with service.client("alpha") as client:
        newcomer = submit(client, small_spec(iterations=2000))
    row = page.locator("tbody tr", has=page.get_by_label(f"compare {newcomer}"))
    expect(row.locator(".badge")).to_have_text("succeeded")   # without reloading the page
    page.keyboard.press("Tab")   # after a page change the focus is on its content
    expect(page.get_by_label("Status")).to_be_focused()
    page.get_by_label("Status").select_option("succeeded")
    expect(page).to_have_url(re.compile(r"status=succeeded"))
    expect(page.get_by_label(f"compare {finished[0]}")).to_be_visible()
    statuses = page.locator("tbody .badge").all_inner_texts()
    assert statuses and set(statuses) == {"succeeded"}
    screenshot(page, "jobs")
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, "jobs-phone")
    assert width <= 390


def test_another_tenants_job_is_not_found(page: Page, finished: list[str], console: Console):
    sign_in(page, "beta")
    page.goto(f"/ui/#/jobs/{finished[0]}")
    expect(page.get_by_role("alert")).to_contain_text("Job not found")
    screenshot(page, "not-found")
    console.expect("404")


def test_a_bad_spec_shows_its_json_path(page: Page, console: Console):
    spec = small_spec()
    spec["constraints"] = [{"type": "ordering", "pairs": [[0, 9]]}]
    sign_in(page)
    page.goto("/ui/#/submit")
    page.get_by_label("Problem spec (JSON)").fill(json.dumps(spec))
    page.get_by_role("button", name="Validate").click()

    expect(page.locator(".issues .path")).to_have_text("constraints[0].pairs[0][1]")
    expect(page.get_by_role("alert")).to_contain_text("out of range")
    screenshot(page, "bad-spec")
    console.expect("422")


def fits(page: Page, width: int) -> bool:
    """Whether the page needs no horizontal scrolling at ``width``."""
    return page.evaluate("document.documentElement.scrollWidth") <= width


def test_every_page_fits_a_phone_tables_scroll_in_their_box_and_charts_resize(
        page: Page, finished: list[str]):
    width = 390
    page.set_viewport_size({"width": width, "height": 844})
    page.goto("/ui/")
    expect(page.get_by_label("API key")).to_be_visible()
    screenshot(page, "signin-phone")
    assert fits(page, width)
    sign_in(page)
    expect(page.get_by_label(f"compare {finished[0]}")).to_be_visible()
    box = page.locator(".jobs .scroll")
    assert box.evaluate("(node) => node.scrollWidth > node.clientWidth")  # scrolls inside
    assert fits(page, width)

    page.goto(f"/ui/#/jobs/{finished[0]}")
    expect(page.get_by_role("heading", name="Mixture")).to_be_visible()
    chart = page.locator("[data-chart=objective]")
    expect(chart).not_to_have_attribute("data-points", "0")
    drawn = chart.evaluate("(svg) => [Math.round(svg.getBoundingClientRect().width), "
                           "Number(svg.dataset.width), svg.getBoundingClientRect().top]")
    assert drawn[0] <= width and drawn[0] == drawn[1], drawn   # drawn at its own width
    folded = page.evaluate("Math.min(...[...document.querySelectorAll('main details')]"
                           ".map((node) => node.getBoundingClientRect().top))")
    assert drawn[2] < folded
    screenshot(page, "job-phone")
    assert fits(page, width)

    page.goto("/ui/#/submit")
    page.get_by_label("Problem spec (JSON)").fill(json.dumps(small_spec()))
    page.get_by_role("button", name="Validate").click()
    expect(page.get_by_role("status")).to_contain_text("The spec is valid", timeout=60_000)
    screenshot(page, "submit-phone")
    assert fits(page, width)

    page.goto(f"/ui/#/compare?ids={','.join(finished)}")
    expect(page.locator("[data-chart=violation] path.line")).to_have_count(2)
    screenshot(page, "compare-phone")
    assert fits(page, width)


def test_a_chart_of_values_equal_to_rounding_draws_them_on_one_level(page: Page):
    """A one-answer method's objective, summed in two orders, differs in its last bits: the
    y scale reads the two values as one (round ticks around it), not as a range of 1e-16."""
    page.goto("/ui/")
    drawn = page.evaluate("""async () => {
        const { lineChart } = await import("/ui/js/chart.js");
        const svg = lineChart({ name: "flat", title: "flat", xLabel: "x", yLabel: "y",
          log: "never", series: [{ label: "f",
            points: [[1, -5.485230000000001], [2, -5.48523]] }] });
        document.body.append(svg);
        return [svg.getAttribute("data-points"), svg.querySelectorAll(".axes text").length];
    }""")
    assert drawn[0] == "2" and 3 <= drawn[1] <= 30
