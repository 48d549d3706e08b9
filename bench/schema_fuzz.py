"""Property-based run of the committed OpenAPI document against a worker-less local stack:
every operation with generated requests (valid and invalid), then stateful sequences that
follow the document's links (submit, then status, events, result, cancel of that job).

Each response is checked for a 5xx and against the document (status code, content type,
headers, body schema); failures are counted, not raised, so one run reports them all.
``/readyz`` is left out: with no worker its documented answer is a 503. A request that gets
no answer within ``--request-timeout-s`` (an event stream of a queued job stays open) is
counted apart.

Usage (from the repository root)::

    python -m bench.schema_fuzz                      # 5,000 cases + 2,000 stateful requests
    python -m bench.schema_fuzz --cases 500 --stateful 200

Writes ``bench/results/schema_fuzz.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.stateful import run_state_machine_as_test
from schemathesis.core.failures import FailureGroup

from service.openapi import COMMITTED
from tests.local_stack import KEYS, RedisServer, Stack
from tests.service.test_schemathesis import CHECKS

RESULTS = Path(__file__).resolve().parent / "results"
AUTH = {"Authorization": f"Bearer {KEYS['gamma']}"}

#: A small tenant cap (reached often, so 429s are checked too), and keep-alives rarer than
#: the request timeout, so that following a queued job's events ends at the timeout.
STACK_SETTINGS = {"LIGHTTOUCH_MAX_ACTIVE_JOBS": "20", "LIGHTTOUCH_SSE_KEEPALIVE_S": "60"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5000, help="generated requests in all")
    parser.add_argument("--stateful", type=int, default=2000,
                        help="requests of stateful runs, at least")
    parser.add_argument("--request-timeout-s", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logs", type=Path, help="keep the API's log here")
    parser.add_argument("--output", type=Path, default=RESULTS / "schema_fuzz.json")
    return parser.parse_args()


class Tally:
    """Requests sent, statuses seen, failed checks (by check and operation), timeouts."""

    def __init__(self) -> None:
        self.requests = 0
        self.statuses: collections.Counter[int] = collections.Counter()
        self.failures: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, str] = {}
        self.timeouts = 0
        self.runs = 0
        self.broken: collections.Counter[str] = collections.Counter()

    def check(self, case, response) -> None:
        """Count the response and every check it fails."""
        self.requests += 1
        self.statuses[response.status_code] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except (AssertionError, FailureGroup) as failure:
            key = f"{case.operation.label}: {type(failure).__name__}"
            self.failures[key] += 1
            self.examples.setdefault(key, str(failure)[:2000])

    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


def call(case, base_url: str, session: requests.Session, timeout_s: float, tally: Tally):
    """Send the case with the API key; None (counted) when it timed out."""
    case.headers = {**(case.headers or {}), **AUTH}  # call(headers=) loses to the case's own
    try:
        return case.call(base_url=base_url, session=session, timeout=timeout_s)
    except requests.Timeout:
        tally.timeouts += 1
        return None
    except requests.RequestException as error:  # the server broke the connection
        key = f"{case.operation.label}: {type(error).__name__}"
        tally.broken[key] += 1
        tally.examples.setdefault(key, f"{case.method} {case.formatted_path} "
                                       f"headers={case.headers}: {error}"[:2000])
        return None


def fuzz_operations(schema, base_url: str, cases: int, args: argparse.Namespace,
                    tally: Tally) -> None:
    """At least ``cases`` requests spread over the operations, from their generated
    strategies: rounds over every operation, each round with its own seed, until enough
    were sent (an operation with few distinct requests, such as ``/healthz``, ends early)."""
    operations = [result.ok() for result in schema.get_all_operations()]
    per_operation = max(1, cases // len(operations))
    session = requests.Session()
    while tally.requests < cases:
        tally.runs += 1
        for operation in operations:
            @seed(args.seed * 1000 + tally.runs)
            @given(case=operation.as_strategy())
            @settings(max_examples=per_operation, deadline=None, database=None,
                      phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck))
            def run(case) -> None:
                response = call(case, base_url, session, args.request_timeout_s, tally)
                if response is not None:
                    tally.check(case, response)

            run()


def fuzz_stateful(schema, base_url: str, requests_wanted: int, args: argparse.Namespace,
                  tally: Tally) -> None:
    """Sequences of linked requests until ``requests_wanted`` were sent; ``tally.runs``
    counts the sequences."""
    base = schema.as_state_machine()
    session = requests.Session()

    class Machine(base):  # type: ignore[misc, valid-type]
        def call(self, case, **kwargs):
            response = call(case, base_url, session, args.request_timeout_s, tally)
            if response is None:
                raise TimeoutError("no answer")   # ends this run; counted as a timeout
            return response

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            tally.check(case, response)

    while tally.requests < requests_wanted:
        tally.runs += 1
        try:
            run_state_machine_as_test(Machine, settings=settings(
                max_examples=1, deadline=None, database=None, derandomize=False,
                stateful_step_count=6, suppress_health_check=list(HealthCheck)))
        except TimeoutError:
            continue


def main() -> None:
    args = parse_args()
    schema = schemathesis.openapi.from_path(COMMITTED).exclude(path="/readyz")
    started = time.monotonic()
    server = RedisServer()
    try:
        with tempfile.TemporaryDirectory() as logs:
            stack = Stack(server.url(0), args.logs or Path(logs), STACK_SETTINGS)
            stack.start_api()
            try:
                generated = Tally()
                fuzz_operations(schema, stack.url, args.cases, args, generated)
                stateful = Tally()
                fuzz_stateful(schema, stack.url, args.stateful, args, stateful)
            finally:
                stack.close()
    finally:
        server.stop()
    report = {
        "schemathesis": schemathesis.__version__ if hasattr(schemathesis, "__version__")
        else "unknown",
        "seconds": round(time.monotonic() - started, 1),
        "checks": [check.__name__ for check in CHECKS],
        **{name: {"runs": tally.runs, "requests": tally.requests,
                  "server_errors": tally.server_errors(),
                  "check_failures": sum(tally.failures.values()),
                  "timeouts": tally.timeouts,
                  "broken_connections": sum(tally.broken.values()),
                  "broken": dict(tally.broken),
                  "statuses": dict(sorted(tally.statuses.items())),
                  "failures": dict(tally.failures), "examples": tally.examples}
           for name, tally in (("generated", generated), ("stateful", stateful))},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({name: {k: v for k, v in part.items() if k != "examples"}
                      if isinstance(part, dict) else part for name, part in report.items()},
                     indent=2))


if __name__ == "__main__":
    main()
