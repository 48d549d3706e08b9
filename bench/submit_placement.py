"""What placing a job at submit adds to ``POST /v1/jobs`` (docs/scale.md#refused-at-submit),
on a local stack (redis-server and the uvicorn API, no worker: jobs stay queued).

A spec with inline examples spawns no child; one whose pairs are npy files is placed from
their headers in the bounded validation child. The first child of an API process starts the
fork server (timed apart); then ``--repeats`` submits of each, median and largest, printed
and written to ``bench/results/submit_placement.json``.

Usage (from the repository root)::

    python -m bench.submit_placement
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from tests.distributed.test_pairs import pair_spec
from tests.local_stack import RedisServer, Stack, small_spec


def _timed(client, spec: dict) -> float:
    """Seconds one accepted submit of ``spec`` takes."""
    started = time.perf_counter()
    response = client.post("/v1/jobs", json=spec)
    took = time.perf_counter() - started
    assert response.status_code == 202, response.text
    return took


RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    """Print and record the first file submit's seconds and each spec's median and largest
    submit."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    redis, data = RedisServer(), Path(tempfile.mkdtemp())
    stack = Stack(redis.url(9), Path(tempfile.mkdtemp()),
                  {"LIGHTTOUCH_DATA_ROOTS": str(data), "LIGHTTOUCH_MAX_ACTIVE_JOBS": "1000"})
    stack.start_api()
    try:
        specs = {"inline examples": small_spec(),
                 "600 pairs in npy files": pair_spec(data, "npy", 600, workers=None)}
        with stack.client() as client:
            record = {"load_before": os.getloadavg()[0], "repeats": args.repeats,
                      "first_file_submit_s": _timed(client, specs["600 pairs in npy files"])}
            for name, spec in specs.items():
                times = [_timed(client, spec) for _ in range(args.repeats)]
                record[name] = {"median_s": statistics.median(times), "largest_s": max(times)}
            record["load_after"] = os.getloadavg()[0]
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "submit_placement.json").write_text(json.dumps(record, indent=2))
        print(json.dumps(record, indent=2))
    finally:
        stack.close()
        redis.stop()


if __name__ == "__main__":
    main()
