"""The README's and docs/service.md's picture of the dashboard, from a real job.

Starts a local stack (redis-server, the API, one worker: :mod:`tests.local_stack`), submits
an example spec (by default ``examples/adult_fairness_table.json``: a calibrated linear model
under four equal-opportunity constraints), waits for it to succeed, opens its job page in
headless Chromium (Playwright driving Debian's ``/usr/bin/chromium``, or
``LIGHTTOUCH_TEST_CHROMIUM``) and saves the page from its top to the first bar chart (the
first categorical calibrator: verdict, convergence chart, mixture, folded constraints and a
row of calibrators) as a PNG. The stack is stopped afterwards.

Usage (from the repository root; needs the ``dev`` extra for Playwright)::

    python -m bench.dashboard_picture                    # writes docs/dashboard.png
    python -m bench.dashboard_picture --spec examples/constrained_qp.json --out /tmp/qp.png
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.local_stack import KEYS, REPO, RedisServer, Stack, wait_for

DEFAULT_SPEC = REPO / "examples" / "adult_fairness_table.json"
DEFAULT_OUT = REPO / "docs" / "dashboard.png"
#: Pixels of page below the last element the picture shows.
MARGIN_PX = 10
#: True once the convergence chart has points and every line chart is drawn at its width.
DRAWN = """() => Number(document.querySelector('[data-chart=objective]').dataset.points) > 0
    && [...document.querySelectorAll('svg.chart')].every((chart) =>
        Math.round(chart.getBoundingClientRect().width) === Number(chart.dataset.width))"""


def run_job(stack: Stack, spec: dict, timeout_s: float) -> str:
    """Submit ``spec`` as tenant alpha and wait until it succeeds; the job's id."""
    with stack.client("alpha") as client:
        response = client.post("/v1/jobs", json=spec)
        response.raise_for_status()
        job_id = response.json()["id"]

        def ended() -> str | None:
            status = client.get(f"/v1/jobs/{job_id}").json()["status"]
            return status if status in {"succeeded", "failed", "cancelled"} else None

        status = wait_for(ended, timeout_s, f"job {job_id} to end", interval_s=0.5)
    if status != "succeeded":
        raise RuntimeError(f"job {job_id} {status}; see the worker log in {stack.logs}")
    return job_id


def screenshot(url: str, job_id: str, out: Path, width: int, until: str) -> None:
    """Sign in, open the job page once its verdict and chart are drawn, save ``out``: the page
    down to the first element matching ``until`` (the viewport if none does)."""
    executable = os.environ.get("LIGHTTOUCH_TEST_CHROMIUM") or shutil.which("chromium")
    if not executable:
        raise SystemExit("no Chromium: apt-get install -y chromium, or set "
                         "LIGHTTOUCH_TEST_CHROMIUM")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        page = browser.new_page(viewport={"width": width, "height": 900}, base_url=url)
        page.goto("/ui/")
        page.get_by_label("API key").fill(KEYS["alpha"])
        page.keyboard.press("Enter")
        page.get_by_role("heading", name="Jobs").wait_for()
        page.goto(f"/ui/#/jobs/{job_id}")
        page.get_by_role("region", name="Verdict").wait_for()
        page.wait_for_function(DRAWN)
        out.parent.mkdir(parents=True, exist_ok=True)
        end = page.locator(until).first
        bottom = end.evaluate("(node) => node.getBoundingClientRect().bottom + scrollY") \
            if end.count() else 900
        page.screenshot(path=out, full_page=True,
                        clip={"x": 0, "y": 0, "width": width, "height": bottom + MARGIN_PX})
        browser.close()


def main() -> None:
    """Run the job and take the picture (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="the spec to run")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write")
    parser.add_argument("--width", type=int, default=1280, help="viewport width (px)")
    parser.add_argument("--until", default=".bar-chart",
                        help="CSS selector: the picture ends below the first element matching it")
    parser.add_argument("--timeout", type=float, default=600, help="seconds the job may take")
    args = parser.parse_args()
    redis_server = RedisServer()
    logs = Path(tempfile.mkdtemp(prefix="lighttouch-picture-"))
    stack = Stack(redis_server.url(1), logs)
    try:
        stack.start_api()
        stack.start_worker()
        job_id = run_job(stack, json.loads(args.spec.read_text()), args.timeout)
        screenshot(stack.url, job_id, args.out, args.width, args.until)
    finally:
        stack.close()
        redis_server.stop()
    shutil.rmtree(logs, ignore_errors=True)
    print(f"job {job_id}: wrote {args.out}")


if __name__ == "__main__":
    main()
