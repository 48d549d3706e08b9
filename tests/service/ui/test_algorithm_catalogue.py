"""An algorithm added to the catalogue (:data:`worker.catalogue.CATALOGUE`) and nowhere else
appears in the spec's enum (a spec naming it solves), the OpenAPI document,
``GET /v1/algorithms`` and the dashboard's filter: processes are started with one more
record."""

from __future__ import annotations

import subprocess
import sys

import httpx
from playwright.sync_api import Browser, expect

from tests.local_stack import REPO, RedisServer, Stack, wait_for
from tests.service.ui.conftest import Console
from worker.catalogue import CATALOGUE

NEW = "fulltouch_again"
#: An API process whose catalogue has one more record (FullTouch under a new name): the
#: catalogue module is loaded, and the record added, before the ``worker`` package is.
ONE_MORE = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("worker.catalogue", "worker/catalogue.py")
catalogue = sys.modules["worker.catalogue"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(catalogue)
catalogue.CATALOGUE[{NEW!r}] = catalogue.Algorithm("worker.algorithms.runners.touch:run_fulltouch")
"""
SERVE_WITH_ONE_MORE = ONE_MORE + """
from service.cli import main
sys.exit(main(sys.argv[1:]))
"""
#: A spec naming the new algorithm is parsed and solved by its runner (which names itself).
SOLVE_WITH_ONE_MORE = ONE_MORE + f"""
from worker import solve
from worker.spec.models import ALGORITHMS
assert ALGORITHMS[-1] == {NEW!r}, ALGORITHMS
objective = {{"type": "quadratic", "Q": [[1.0, 0.0], [0.0, 1.0]]}}
result = solve({{"dimension": 2, "objective": objective,
                "solver": {{"algorithm": {NEW!r}, "iterations": 100}}}})
print(result.algorithm)
"""


def test_a_catalogue_record_is_a_spec_name_that_solves():
    assert NEW not in CATALOGUE
    run = subprocess.run([sys.executable, "-c", SOLVE_WITH_ONE_MORE], cwd=REPO, text=True,
                         capture_output=True, timeout=300)
    assert run.returncode == 0 and run.stdout.split() == ["fulltouch"], run.stderr


def test_a_catalogue_record_reaches_the_spec_openapi_and_dashboard(
        redis_server: RedisServer, browser: Browser, console: Console, tmp_path):
    assert NEW not in CATALOGUE
    stack = Stack(redis_server.url(9), tmp_path, {"LIGHTTOUCH_API_KEYS": ""})
    with (tmp_path / "api.log").open("ab") as log:
        stack.api = subprocess.Popen(
            [sys.executable, "-c", SERVE_WITH_ONE_MORE, "serve", "--port", str(stack.port)],
            cwd=REPO, env=stack.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(stack._api_up, 30, f"the API (log {tmp_path / 'api.log'})")
        document = httpx.get(f"{stack.url}/openapi.json").json()
        solver = document["components"]["schemas"]["Solver"]["properties"]["algorithm"]
        assert NEW in solver["enum"]
        listing = document["paths"]["/v1/jobs"]["get"]["parameters"]
        algorithm = next(p for p in listing if p["name"] == "algorithm")
        assert NEW in algorithm["schema"]["anyOf"][0]["enum"]
        names = httpx.get(f"{stack.url}/v1/algorithms").json()["names"]
        assert names == ["auto", *CATALOGUE, NEW]

        context = browser.new_context(base_url=stack.url)
        page = context.new_page()
        page.on("console", console.record)
        page.goto("/ui/")
        options = page.get_by_label("Algorithm").locator("option")
        expect(options).to_have_count(len(names) + 1)   # "any" first
        assert options.all_inner_texts() == ["any", *names]
        context.close()
    finally:
        stack.close()
    assert console.errors == []
