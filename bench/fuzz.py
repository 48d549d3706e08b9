"""Fuzz run of a local stack with the hostile corpus of :mod:`bench.fuzz_corpus`.

Every case is sent to a real API (with real workers, so accepted jobs run); then:

* ``server_errors``: answers with a 5xx status (must be 0);
* ``internal_error_jobs``: accepted jobs that ended with an internal error (must be 0);
* ``unnamed_refusals``: refusals that name no field (must be 0). A 422 or 400 names its
  field when every entry of ``errors`` has a path; an entry with the empty path refuses the
  whole body (not JSON, nested too deep, not an object), counted in ``body_refusals``; a 415
  names the Content-Type, a 413 the body size, a 405 lists ``Allow``, a 404 names the job
  id or says that no route matches the path;
* ``broken_connections``: requests the server answered by dropping the connection;
* the API process's resident memory before and after (``api_rss_growth_bytes``).

Usage (from the repository root)::

    python -m bench.fuzz                    # 1,200 cases, seed 0
    python -m bench.fuzz --cases 200 --seed 3

Writes ``bench/results/fuzz.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.fuzz_corpus import Case, corpus
from tests.local_stack import RedisServer, Stack, wait_for

RESULTS = Path(__file__).resolve().parent / "results"

#: The fuzz stack's settings: a 256 MiB per-job budget, no tenant cap, short jobs.
STACK_SETTINGS = {"LIGHTTOUCH_MAX_JOB_BYTES": str(256 * 2**20),
                  "LIGHTTOUCH_MAX_ACTIVE_JOBS": "100000", "LIGHTTOUCH_JOB_TIMEOUT_S": "30"}

#: Job errors that mean the service failed, not the input.
INTERNAL = "internal error"

#: Statuses that refuse the request's input (409 and 429 are about state, not input).
REFUSALS = {400, 404, 405, 413, 415, 422}


@dataclass
class Report:
    """What the corpus got: counts by family and status, and examples of every failure."""

    requests: int = 0
    statuses: collections.Counter = field(default_factory=collections.Counter)
    by_family: dict[str, collections.Counter] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter))
    server_errors: int = 0
    unnamed_refusals: int = 0
    body_refusals: int = 0
    broken_connections: int = 0
    jobs: dict[str, str] = field(default_factory=dict)
    job_outcomes: collections.Counter = field(default_factory=collections.Counter)
    internal_error_jobs: int = 0
    examples: dict[str, list[str]] = field(
        default_factory=lambda: collections.defaultdict(list))

    def note(self, kind: str, case: Case, detail: str) -> None:
        if len(self.examples[kind]) < 20:
            self.examples[kind].append(f"[{case.family}] {case.name}: {detail[:600]}")

    def as_dict(self) -> dict:
        return {"requests": self.requests, "server_errors": self.server_errors,
                "unnamed_refusals": self.unnamed_refusals, "body_refusals": self.body_refusals,
                "broken_connections": self.broken_connections,
                "jobs_accepted": len(self.jobs), "internal_error_jobs": self.internal_error_jobs,
                "job_outcomes": dict(self.job_outcomes),
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "by_family": {family: {str(k): v for k, v in sorted(counts.items())}
                              for family, counts in sorted(self.by_family.items())},
                "examples": dict(self.examples)}


def names_its_field(response: httpx.Response) -> bool:
    """True when a refusal says which part of the request to fix (module docstring)."""
    try:
        body = response.json()
    except ValueError:
        return False
    detail = str(body.get("detail", ""))
    status = response.status_code
    if status in (400, 422):
        return bool(body.get("errors")) and all("path" in entry for entry in body["errors"])
    return {415: "Content-Type" in detail, 413: "body" in detail,
            405: bool(response.headers.get("allow")),
            404: "no job" in detail or "no route" in detail}.get(status, False)


def refuses_the_body(response: httpx.Response) -> bool:
    """A 422 whose issue is at the empty path: the body as a whole."""
    return response.status_code == 422 and any(
        entry.get("path") == "" for entry in response.json().get("errors") or [])


def send(client: httpx.Client, case: Case, report: Report) -> None:
    """Send one case and judge the answer."""
    headers = dict(case.headers)
    if case.content_type is not None:
        headers["Content-Type"] = case.content_type
    try:
        response = client.request(case.method, case.path, content=case.body, headers=headers)
    except httpx.TransportError as error:
        report.broken_connections += 1
        report.note("broken_connections", case, repr(error))
        return
    report.requests += 1
    status = response.status_code
    report.statuses[status] += 1
    report.by_family[case.family][status] += 1
    if status >= 500:
        report.server_errors += 1
        report.note("server_errors", case, response.text)
    elif status in REFUSALS and not names_its_field(response):
        report.unnamed_refusals += 1
        report.note("unnamed_refusals", case, f"{status} {response.text}")
    elif refuses_the_body(response):
        report.body_refusals += 1
    elif status == 202 and case.path == "/v1/jobs":
        report.jobs[response.json()["id"]] = case.name


def settle_jobs(client: httpx.Client, report: Report, timeout_s: float) -> None:
    """Wait for every accepted job to end; count outcomes and internal errors."""
    pending = dict(report.jobs)

    def all_ended() -> bool:
        for job_id in list(pending):
            document = client.get(f"/v1/jobs/{job_id}").json()
            if document["status"] in ("queued", "running"):
                return False
            name = pending.pop(job_id)
            report.job_outcomes[document["status"]] += 1
            error = document.get("error") or ""
            if document["status"] == "failed":
                report.note("failed_jobs", Case("job", name, "GET", ""), error)
            if INTERNAL in error:
                report.internal_error_jobs += 1
                report.note("internal_error_jobs", Case("job", name, "GET", ""), error)
        return True

    wait_for(all_ended, timeout_s, f"{len(pending)} fuzz jobs to end", interval_s=0.5)


def resident_bytes(pid: int) -> int:
    """VmRSS of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) * 1024 for line in status.splitlines()
                if line.startswith("VmRSS:"))


def run_corpus(stack: Stack, cases: list[Case], jobs_timeout_s: float = 900) -> dict:
    """Send ``cases`` to the stack's API (authenticated), settle the jobs; the report."""
    report = Report()
    with stack.client() as client:
        before = resident_bytes(stack.api.pid)
        for case in cases:
            send(client, case, report)
        after = resident_bytes(stack.api.pid)
        settle_jobs(client, report, jobs_timeout_s)
    return {**report.as_dict(), "api_rss_before_bytes": before,
            "api_rss_growth_bytes": after - before}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS / "fuzz.json")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    cases = corpus(args.cases, args.seed)
    server = RedisServer()
    try:
        with tempfile.TemporaryDirectory() as logs:
            stack = Stack(server.url(0), Path(logs), STACK_SETTINGS)
            try:
                stack.start_api()
                for _ in range(args.workers):
                    stack.start_worker()
                with stack.client() as client:  # the first validation starts the fork server
                    client.post("/v1/validate", content=cases[0].body or b"{}",
                                headers={"Content-Type": "application/json"})
                report = run_corpus(stack, cases)
            finally:
                stack.close()
    finally:
        server.stop()
    result = {"cases": len(cases), "seed": args.seed, "settings": STACK_SETTINGS,
              "families": dict(collections.Counter(case.family for case in cases)),
              "seconds": round(time.monotonic() - started, 1), **report}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("examples", "by_family")},
                     indent=2))


if __name__ == "__main__":
    main()
