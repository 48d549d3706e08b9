"""A short run of the hostile corpus (:mod:`bench.fuzz_corpus`, 100 cases, fixed seed)
against a real API and worker: no 5xx, no refusal without its field, no internal-error job,
no dropped connection, and the API does not grow (``bench/fuzz.py`` runs 1,200)."""

from __future__ import annotations

from bench.fuzz import STACK_SETTINGS, run_corpus
from bench.fuzz_corpus import FAMILIES, corpus
from tests.service.stacks import api_stack

#: Growth of the API's resident memory the corpus may cause, at most.
MAX_GROWTH = 64 * 2**20


def test_the_hostile_corpus_gets_named_refusals_and_no_server_error(redis_server, tmp_path):
    cases = corpus(100, seed=1)
    assert {case.family for case in cases} == set(FAMILIES)
    with api_stack(redis_server, tmp_path, 9, STACK_SETTINGS) as stack:
        stack.start_worker()
        report = run_corpus(stack, cases, jobs_timeout_s=300)
    problems = {kind: report["examples"].get(kind) for kind in
                ("server_errors", "unnamed_refusals", "internal_error_jobs",
                 "broken_connections")}
    assert report["requests"] == len(cases), problems
    assert report["server_errors"] == report["unnamed_refusals"] == 0, problems
    assert report["internal_error_jobs"] == report["broken_connections"] == 0, problems
    assert report["statuses"]["422"] >= 50 and report["jobs_accepted"] >= 5
    assert report["api_rss_growth_bytes"] < MAX_GROWTH
