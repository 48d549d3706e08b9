"""lighttouch.AsyncClient: the blocking client's methods under asyncio, on real processes."""

from __future__ import annotations

import asyncio

import pytest

from lighttouch import AsyncClient, Client, JobFailed, RemoteProblem
from tests.lighttouch.test_client import rate_spec, untimed
from tests.local_stack import KEYS, small_spec


def test_async_jobs_give_what_blocking_jobs_give(stack):
    spec = rate_spec(seed=7)

    async def run():
        async with AsyncClient(stack.url, KEYS["alpha"]) as client:
            job = await client.submit(spec)
            names = [event.name async for event in job.events(timeout=120)]
            final = await job.wait(timeout=120, progress=False)
            listed = await client.jobs(status="succeeded")
            return job.id, names, final, await job.result(), listed

    job_id, names, final, result, listed = asyncio.run(run())
    with Client(stack.url, KEYS["alpha"]) as client:
        blocking = client.job(job_id).result()
    assert names[0] == "status" and names[-1] == "result" and final["status"] == "succeeded"
    assert job_id in [job["id"] for job in listed]
    assert untimed(result) == untimed(blocking)


def test_async_problems_carry_the_json_path_and_cancel_works(stack):
    spec = rate_spec()
    spec["objective"]["l2"] = -1.0

    async def run():
        async with AsyncClient(stack.url, KEYS["alpha"]) as client:
            with pytest.raises(RemoteProblem) as caught:
                await client.validate(spec)
            job = await client.submit(small_spec(iterations=10**9))
            await job.cancel()
            with pytest.raises(JobFailed, match="cancelled"):
                await job.wait(timeout=60, progress=False)
            return caught.value

    problem = asyncio.run(run())
    assert problem.status == 422 and problem.paths == ["objective.l2"]
