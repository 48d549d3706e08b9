"""Load benchmark of the service on a local stack (redis-server, uvicorn API, one worker).

==================  ===========================================================================
measurement         how
==================  ===========================================================================
submit throughput   closed loop: ``--concurrency`` clients POST a small spec for ``--seconds``
submit @ rate       open loop: POST /v1/jobs at ``--rate`` req/s; latency from the scheduled
                    send time (so a stalled server is charged for the requests it delays)
status @ rate       open loop: GET /v1/jobs/{id} of submitted jobs at ``--rate`` req/s
SSE latency         receipt time of each streamed event minus its Redis stream id (the
                    millisecond at which the work horse's XADD ran), over the long jobs below
service overhead    a ~``--job-seconds`` job: submit → SSE to the end → GET result, against
                    ``solve`` of the same spec in this process; ``--repeats`` of each, medians
==================  ===========================================================================

The submit and status phases run with no worker (jobs stay queued), so they measure the API
and Redis alone; the load generator shares the machine's cores with them, and the report
records the load average before and after (other work on the machine skews every figure).
Targets (issue 4):
p99 submit < 50 ms at 200 req/s, event latency p99 < 100 ms, overhead < 5 %.

Usage (from the repository root)::

    python -m bench.service_load                 # JSON + PNG in bench/results/
    python -m bench.service_load --seconds 3 --job-seconds 3 --repeats 1   # a quick run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import matplotlib
import numpy as np
from httpx_sse import aconnect_sse

from tests.local_stack import KEYS, RedisServer, Stack, small_spec
from worker import solve

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
HEADERS = {"Authorization": f"Bearer {KEYS['alpha']}"}
SMALL = small_spec()


def percentiles(samples_s: list[float]) -> dict[str, float]:
    """p50, p90, p99 and max in milliseconds."""
    values = np.array(samples_s) * 1000
    return {"count": len(values), **{f"p{q}_ms": float(np.percentile(values, q))
                                     for q in (50, 90, 99)}, "max_ms": float(values.max())}


async def closed_loop(url: str, concurrency: int, seconds: float) -> dict:
    """Submissions per second with ``concurrency`` clients each sending back to back."""
    deadline = time.perf_counter() + seconds
    done = 0

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            response = await client.post("/v1/jobs", json=SMALL)
            response.raise_for_status()
            done += 1

    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=30,
                                 limits=httpx.Limits(max_connections=concurrency)) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {"concurrency": concurrency, "requests": done, "per_s": done / elapsed}


async def open_loop(url: str, rate: float, seconds: float, request) -> tuple[dict, list[float]]:
    """Send ``request(client, i)`` at ``rate`` per second; latencies from the scheduled time."""
    count = int(rate * seconds)
    latencies: list[float] = []
    errors = 0
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=30,
                                 limits=httpx.Limits(max_connections=256)) as client:
        start = time.perf_counter() + 0.2

        async def one(i: int) -> None:
            nonlocal errors
            scheduled = start + i / rate
            await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
            response = await request(client, i)
            latencies.append(time.perf_counter() - scheduled)
            errors += response.is_error

        await asyncio.gather(*(one(i) for i in range(count)))
        achieved = count / (time.perf_counter() - start)
    return {"rate": rate, "achieved_per_s": achieved, "errors": errors,
            **percentiles(latencies)}, latencies


async def follow_job(url: str, body: dict) -> tuple[float, list[float], bytes]:
    """Submit, stream to the end, fetch the result: wall seconds, event latencies, result."""
    lags = []
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=60) as client:
        started = time.perf_counter()
        job = (await client.post("/v1/jobs", json=body)).json()
        async with aconnect_sse(client, "GET", job["links"]["events"]) as source:
            async for event in source.aiter_sse():
                lags.append(time.time() - int(event.id.split("-")[0]) / 1000)
        result = (await client.get(job["links"]["result"])).content
        return time.perf_counter() - started, lags, result


def calibrated_spec(job_seconds: float) -> dict:
    """:func:`spec` with as many iterations as ``job_seconds`` of solving in this process."""
    probe = 200_000
    solve(small_spec(iterations=probe))                      # warm the kernels
    began = time.perf_counter()
    solve(small_spec(iterations=probe))
    per_s = probe / (time.perf_counter() - began)
    return small_spec(iterations=int(per_s * job_seconds))


def overhead(url: str, body: dict, repeats: int) -> tuple[dict, list[float]]:
    """Wall times via the service and in this process (alternating), and event latencies.

    ``service_only_s`` is the service's wall time minus the solve's own ``wall_s`` in the
    work horse: queueing, fork, events, result storage and download, free of the noise that
    other load on the machine adds to the solve itself.
    """
    service_s, local_s, service_only_s, lags = [], [], [], []
    for _ in range(repeats):
        began = time.perf_counter()
        solve(body)
        local_s.append(time.perf_counter() - began)
        wall, job_lags, result = asyncio.run(follow_job(url, body))
        service_s.append(wall)
        service_only_s.append(wall - json.loads(result)["stats"]["wall_s"])
        lags += job_lags
    service, local = statistics.median(service_s), statistics.median(local_s)
    return {"iterations": body["solver"]["iterations"], "repeats": repeats,
            "service_s": service_s, "in_process_s": local_s, "service_only_s": service_only_s,
            "median_service_s": service, "median_in_process_s": local,
            "overhead_fraction": service / local - 1,
            "median_service_only_fraction": statistics.median(service_only_s) / local}, lags


def run(args: argparse.Namespace) -> dict:
    """Every measurement: an API-only stack, then a stack with one worker."""
    server = RedisServer()
    report: dict = {"cpus": os.cpu_count(), "rate": args.rate, "seconds": args.seconds,
                    "load_average_before": os.getloadavg()}
    ids: list[str] = []

    async def submit(client: httpx.AsyncClient, i: int) -> httpx.Response:
        response = await client.post("/v1/jobs", json=SMALL)
        ids.append(response.json()["id"])
        return response

    logs = Path(tempfile.mkdtemp(prefix="lighttouch-bench-"))
    api_only = Stack(server.url(0), logs / "api-only", {"LIGHTTOUCH_MAX_ACTIVE_JOBS": "1000000"})
    with_worker = Stack(server.url(1), logs / "with-worker")
    try:
        api_only.start_api()
        report["submit_throughput"] = asyncio.run(
            closed_loop(api_only.url, args.concurrency, args.seconds))
        report["submit"], submit_lat = asyncio.run(
            open_loop(api_only.url, args.rate, args.seconds, submit))
        report["status"], status_lat = asyncio.run(open_loop(
            api_only.url, args.rate, args.seconds,
            lambda client, i: client.get(f"/v1/jobs/{random.choice(ids)}")))
        api_only.close()
        with_worker.start_api()
        with_worker.start_worker()
        report["overhead"], lags = overhead(with_worker.url, calibrated_spec(args.job_seconds),
                                            args.repeats)
        report["sse"] = percentiles(lags)
        report["load_average_after"] = os.getloadavg()
    finally:
        api_only.close()
        with_worker.close()
        server.stop()
        shutil.rmtree(logs)
    plot(report, submit_lat, status_lat, lags)
    return report


def plot(report: dict, submit_lat: list[float], status_lat: list[float],
         lags: list[float]) -> None:
    """Latency distributions and the overhead comparison, one PNG."""
    figure, (latency, sse, cost) = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, samples in (("submit", submit_lat), ("status", status_lat)):
        values = np.sort(np.array(samples) * 1000)
        latency.plot(values, np.arange(1, len(values) + 1) / len(values), label=name)
    latency.axvline(50, color="grey", linestyle=":", label="50 ms target")
    latency.set(xscale="log", xlabel="latency (ms)", ylabel="fraction of requests",
                title=f"open loop at {report['rate']:.0f} req/s")
    latency.legend()
    sse.hist(np.array(lags) * 1000, bins=40)
    sse.axvline(100, color="grey", linestyle=":")
    sse.set(xlabel="XADD → client receipt (ms)", ylabel="events", title="SSE event latency")
    over = report["overhead"]
    runs = np.arange(1, over["repeats"] + 1)
    cost.plot(runs, over["in_process_s"], "o-", label="in process")
    cost.plot(runs, over["service_s"], "s-", label="via service (submit → result)")
    cost.set(xlabel="run", ylabel="wall seconds", xticks=runs,
             title=f"overhead {100 * over['overhead_fraction']:+.1f} % of medians; service-only "
                   f"{100 * over['median_service_only_fraction']:.1f} %")
    cost.legend()
    figure.tight_layout()
    figure.savefig(RESULTS / "service_load.png", dpi=110)


def main() -> None:
    """Parse options, run, write ``bench/results/service_load.json`` and ``.png``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=200.0, help="open-loop req/s")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--concurrency", type=int, default=16, help="closed-loop clients")
    parser.add_argument("--job-seconds", type=float, default=10.0, help="overhead job length")
    parser.add_argument("--repeats", type=int, default=5, help="overhead repetitions")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    report = run(args)
    (RESULTS / "service_load.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
