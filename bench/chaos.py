"""Chaos run of a local stack: jobs under random SIGKILLs of work horses, worker parents and
whole workers, Redis restarts (``SHUTDOWN`` and ``kill -9`` of an AOF redis-server) and API
restarts, then the invariants of docs/guarantees.md checked on every job:

* exactly one outcome, and the job's stream ends with exactly one terminal event;
* a ``succeeded`` outcome has its stored result, and a stored result belongs to a
  ``succeeded`` job (no finished result lost, none stored for a job ended otherwise);
* every worker not killed on purpose is alive after every Redis restart.

Usage (from the repository root)::

    python -m bench.chaos                       # 200 jobs, 100 kills, 3 + 3 restarts
    python -m bench.chaos --jobs 30 --kills 15 --redis-restarts 1 --api-restarts 1

Writes ``bench/results/chaos.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import tempfile
import time
from pathlib import Path

from tests.local_stack import RedisServer, Stack, children, small_spec, wait_for
from worker.queue.state import TERMINAL, is_terminal_event
from worker.queue.workers import MISSED_HEARTBEATS

RESULTS = Path(__file__).resolve().parent / "results"
KILLS = ("horse", "parent", "worker")
#: The local stack's heartbeat period (``LIGHTTOUCH_HEARTBEAT_S``).
HEARTBEAT_S = 1
#: Tries of a kill before it is skipped, each after 0.2-1 s (every 10th checks whether all
#: jobs ended; then the rest of the plan is skipped).
RETRIES = 120


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--redis-restarts", type=int, default=3)
    parser.add_argument("--api-restarts", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, nargs=2, default=(10_000_000, 60_000_000),
                        help="range of the jobs' iteration counts: long enough that every "
                             "kill finds a busy worker")
    parser.add_argument("--output", type=Path, default=RESULTS / "chaos.json")
    return parser.parse_args()


def actions(args: argparse.Namespace, rng: random.Random) -> list[str]:
    """The run's disruptions in a random order: kills of each kind, then the restarts."""
    plan = [rng.choice(KILLS) for _ in range(args.kills)]
    plan += ["redis-shutdown" if k % 2 == 0 else "redis-kill" for k in range(args.redis_restarts)]
    plan += ["api"] * args.api_restarts
    rng.shuffle(plan)
    return plan


def disrupt(action: str, stack: Stack, server: RedisServer, rng: random.Random) -> bool:
    """Carry out one disruption; False when there was nothing to hit (no busy worker)."""
    if action.startswith("redis"):
        server.restart("shutdown" if action == "redis-shutdown" else "kill")
        return True
    if action == "api":
        stack.stop_api(signal.SIGKILL)
        stack.start_api()
        return True
    busy = [(worker, horses) for worker in stack.workers if worker.poll() is None
            and (horses := children(worker.pid))]
    if not busy:
        return False
    worker, horses = rng.choice(busy)
    if action == "horse":
        os.kill(horses[0], signal.SIGKILL)
        return True
    worker.kill()
    if action == "worker":
        for horse in horses:
            os.kill(horse, signal.SIGKILL)
    worker.wait()
    stack.workers.remove(worker)
    time.sleep(MISSED_HEARTBEATS * HEARTBEAT_S + 1)   # until the dead one no longer counts
    stack.start_worker()
    return True


def job_findings(stack: Stack, job_id: str) -> dict:
    """The job's outcome, terminal events and stored result, read from Redis."""
    with stack.redis() as redis:
        outcome = redis.get(f"lighttouch:outcome:{job_id}")
        entries = redis.xrange(f"lighttouch:events:{job_id}")
        has_result = bool(redis.exists(f"lighttouch:result:{job_id}"))
    events = [(fields[b"event"].decode(), fields[b"data"].decode()) for _, fields in entries]
    terminal = [k for k, (event, data) in enumerate(events) if is_terminal_event(event, data)]
    status = json.loads(outcome)["status"] if outcome else None
    problems = []
    if status is None:
        problems.append("no outcome")
    if terminal != [len(events) - 1]:
        problems.append(f"terminal events at {terminal} of {len(events)}")
    if (status == "succeeded") != has_result:
        problems.append(f"status {status} with stored result {has_result}")
    return {"status": status, "problems": problems}


def run(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    server = RedisServer(persistent=True)
    stack = Stack(server.url(0), Path(tempfile.mkdtemp(prefix="lighttouch-chaos-")),
                  {"LIGHTTOUCH_MAX_ACTIVE_JOBS": str(args.jobs + 10)})
    started = time.monotonic()
    counts: dict[str, int] = {}
    skipped = 0
    workers_alive_after_redis = []
    try:
        stack.start_api()
        for _ in range(args.workers):
            stack.start_worker()
        with stack.client() as client:
            jobs = [client.post("/v1/jobs", json=small_spec(
                iterations=rng.randrange(*args.iterations), seed=k)).json()["id"]
                for k in range(args.jobs)]

        def all_ended() -> bool:
            with stack.client() as client:
                return all(client.get(f"/v1/jobs/{job_id}").json()["status"] in TERMINAL
                           for job_id in jobs)

        plan = actions(args, rng)
        for done, action in enumerate(plan):
            hit = ended = False
            for attempt in range(RETRIES):  # a kill waits for a busy worker (one may start)
                time.sleep(rng.uniform(0.2, 1.0))
                hit = disrupt(action, stack, server, rng)
                ended = not hit and attempt % 10 == 9 and all_ended()
                if hit or ended:
                    break
            if ended:              # nothing left to hit: the rest of the plan is skipped
                skipped += len(plan) - done
                break
            if not hit:
                skipped += 1
                continue
            counts[action] = counts.get(action, 0) + 1
            if action.startswith("redis"):
                time.sleep(5)
                workers_alive_after_redis.append(all(w.poll() is None for w in stack.workers))

        wait_for(all_ended, 3600, "every job to end", interval_s=2)
        findings = {job_id: job_findings(stack, job_id) for job_id in jobs}
    finally:
        stack.close()
        server.stop()
    statuses: dict[str, int] = {}
    for finding in findings.values():
        statuses[str(finding["status"])] = statuses.get(str(finding["status"]), 0) + 1
    return {"jobs": args.jobs, "workers": args.workers, "seed": args.seed,
            "iterations": args.iterations, "disruptions": counts,
            "kills": sum(counts.get(kind, 0) for kind in KILLS),
            "kills_skipped_without_a_busy_worker": skipped, "outcomes": statuses,
            "jobs_with_problems": {job_id: f["problems"] for job_id, f in findings.items()
                                   if f["problems"]},
            "workers_alive_after_each_redis_restart": workers_alive_after_redis,
            "wall_s": time.monotonic() - started}


def main() -> None:
    args = parse_args()
    report = run(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
