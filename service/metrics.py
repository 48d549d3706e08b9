"""Prometheus metrics: HTTP latency measured here, queue and job figures read from Redis.

Job figures are cluster-wide (every worker writes them to Redis, see :mod:`worker.queue.events`), so
any API replica reports the same numbers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from redis import Redis
from rq.registry import StartedJobRegistry
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker.queue.events import DURATION_BUCKETS_S
from worker.queue.keys import METRICS_KEY, QUEUE_NAME, SERIALIZER, job_queue
from worker.queue.state import TERMINAL
from worker.queue.workers import live_workers

HTTP_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class QueueCollector(Collector):
    """Queue depth, running jobs, ended jobs by status, job durations, live workers."""

    def __init__(self, redis: Redis, heartbeat_s: int):
        self.redis = redis
        self.heartbeat_s = heartbeat_s

    def collect(self) -> Iterator:
        """Read the figures from Redis at scrape time."""
        stored = {name.decode(): value.decode()
                  for name, value in self.redis.hgetall(METRICS_KEY).items()}
        yield GaugeMetricFamily("lighttouch_queue_depth", "Jobs waiting in the queue",
                                value=job_queue(self.redis).count)
        running = StartedJobRegistry(QUEUE_NAME, self.redis, serializer=SERIALIZER).count
        yield GaugeMetricFamily("lighttouch_jobs_running", "Jobs being solved", value=running)
        ended = CounterMetricFamily("lighttouch_jobs_ended", "Jobs ended, by final status",
                                    labels=["status"])
        for status in sorted(TERMINAL):
            ended.add_metric([status], float(stored.get(f"ended:{status}", 0)))
        yield ended
        yield self._durations(stored)
        yield GaugeMetricFamily("lighttouch_workers_alive", "Workers with a recent heartbeat",
                                value=live_workers(self.redis, self.heartbeat_s))

    @staticmethod
    def _durations(stored: dict[str, str]) -> HistogramMetricFamily:
        buckets, total = [], 0
        for bound in DURATION_BUCKETS_S:
            total += int(stored.get(f"duration_bucket:{bound}", 0))
            buckets.append(("+Inf" if bound == float("inf") else str(bound), total))
        return HistogramMetricFamily(
            "lighttouch_job_duration_seconds", "Wall time of jobs from start to end",
            buckets=buckets, sum_value=float(stored.get("duration_sum", 0.0)))


def metrics_registry(redis: Redis, heartbeat_s: int) -> tuple[CollectorRegistry, Histogram]:
    """A registry of this app's metrics and its HTTP latency histogram."""
    registry = CollectorRegistry()
    registry.register(QueueCollector(redis, heartbeat_s))
    latency = Histogram("lighttouch_http_request_duration_seconds",
                        "HTTP request latency (to the end of the response body)",
                        ["method", "route", "status"], buckets=HTTP_BUCKETS_S, registry=registry)
    return registry, latency


class HttpMetrics:
    """ASGI middleware observing each request's latency by method, route template and status."""

    def __init__(self, app: ASGIApp, latency: Histogram):
        self.app = app
        self.latency = latency

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Time the request; label it with the matched route's path template."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            self.latency.labels(scope["method"], getattr(route, "path", "unmatched"),
                                str(status)).observe(time.perf_counter() - started)
