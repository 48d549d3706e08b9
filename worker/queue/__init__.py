"""The job queue's engine side: the RQ task that runs a solve, the Redis keys, job states and
progress events the HTTP edge reads.
"""
