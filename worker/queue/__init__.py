"""The job queue, shared by the HTTP edge and the workers: Redis keys (:mod:`.keys`), job
states (:mod:`.state`), events and outcomes (:mod:`.events`), the RQ task that runs
:func:`~worker.pipeline.solve.solve` in a work horse (:mod:`.task`), the workers
(:mod:`.workers`), and a tenant's side: admitting a job (:mod:`.submit`), reading jobs and
results (:mod:`.records`) and cancelling (:mod:`.cancel`).

A job is an RQ job on the ``lighttouch`` queue whose function is :func:`.task.run_job`; a worker
forks one work horse per job (so stopping a job, even inside a numba loop, is killing a
process). Besides RQ's own ``rq:job:{id}`` hash (status, timestamps, ``meta.tenant``), the
queue keeps these keys (:mod:`.keys` names them all): a job's expire ``result_ttl`` seconds
after it ends; a tenant's (``{t}``) drop a job when it ends or expires:

=============================  ===========================================================
key                            holds
=============================  ===========================================================
``lighttouch:spec:{id}``       the spec JSON as submitted (kept out of RQ's job hash)
``lighttouch:events:{id}``     Stream of events ``progress``, ``status``, ``result``, capped
``lighttouch:progress:{id}``   the latest progress event (JSON)
``lighttouch:outcome:{id}``    how the job ended (JSON), written once by :func:`.events.finish`
``lighttouch:result:{id}``     the Result JSON, serialized once by the work horse
``lighttouch:vectors:{id}``    hash of ``.npy`` bytes: ``mean``, ``projected``, ``mixture``
``lighttouch:active:{t}``      set of tenant ``t``'s jobs not yet ended (its cap)
``lighttouch:jobs:{t}``        sorted set of tenant ``t``'s newest job ids by submit time
``lighttouch:idempotency:…``   ``{t}:{sha256(key)}``: the first job submitted under an
                               ``Idempotency-Key`` (kept ``result_ttl`` seconds)
``lighttouch:warming``         sorted set of workers still warming up, scored by the time
                               their announcement lapses (:func:`.workers.announce_warming`)
=============================  ===========================================================

Every way a job ends goes through :func:`.events.finish`, and the first to get there wins: its
outcome (and a succeeded job's result, in the same server-side step) is written only if none
exists, so a late finisher changes nothing. A work horse dies with its worker parent
(:mod:`.lifetime`), so no orphan outlives the job the reaper ended. Callers: the work horse
on success, RQ's failure
callback (exceptions, time limit, and abandoned jobs found by :func:`.workers.reap_abandoned`), the
worker parent when the horse dies (:func:`.task.horse_killed`) and the API on cancel. A dead
worker is noticed through heartbeats: the worker parent renews the job's entry in RQ's
started-job registry every ``heartbeat_s`` seconds for ``MISSED_HEARTBEATS * heartbeat_s``;
the API reaps expired entries every ``heartbeat_s``, so a job whose worker died ends
``failed`` within ``(MISSED_HEARTBEATS + 1) * heartbeat_s``. Such a job is not retried: a
solve that killed its worker (out of memory, typically) would kill the next one too, and a
rerun would repeat its progress events on the same stream.
"""
