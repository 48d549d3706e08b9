# syntax=docker/dockerfile:1
# LightTouch: one image for the API ("lighttouch serve"), the workers ("lighttouch worker") and
# the optional Dask cluster ("dask scheduler", "dask worker"). docs/deployment.md says how to
# build and run it, with Docker or podman.
ARG PYTHON_VERSION=3.11

# --- deps: the pinned dependencies alone, so a code change does not reinstall them ----------
FROM python:${PYTHON_VERSION}-slim AS deps
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements/image.lock /tmp/image.lock
# --no-deps: the lock is complete (deploy/write_image_lock.py), nothing else gets in. pip's
# cache is a build cache mount, outside the image: a changed lock downloads only what changed.
RUN --mount=type=cache,target=/root/.cache/pip,sharing=locked \
    python -m venv /opt/lighttouch \
    && /opt/lighttouch/bin/pip install --no-deps -r /tmp/image.lock \
    && /opt/lighttouch/bin/pip check

# --- wheel: the project's own code as a wheel --------------------------------------------------
FROM python:${PYTHON_VERSION}-slim AS wheel
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY worker ./worker
COPY service ./service
COPY lighttouch ./lighttouch
RUN python -m pip wheel --no-deps --wheel-dir /wheels .

# --- runtime: the dependencies' layer, the project on top, a non-root user, warm kernels ------
FROM python:${PYTHON_VERSION}-slim AS runtime
RUN useradd --system --uid 10001 --create-home --home-dir /home/lighttouch lighttouch \
    && mkdir /data && chown lighttouch /data
COPY --from=deps /opt/lighttouch /opt/lighttouch
# One thread per work horse (scale with more workers, not threads): no numba or BLAS thread
# pool exists before RQ forks a horse, and horses on one machine do not oversubscribe it.
# NUMBA_CPU_NAME=generic: numba keys its cache to the CPU model it compiled for, so kernels
# compiled for the build machine's CPU would be compiled again by every worker on another
# model (minutes). Generic x86-64 code loads on any; measured no slower here
# (docs/deployment.md).
ENV PATH=/opt/lighttouch/bin:$PATH \
    PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/home/lighttouch/numba-cache NUMBA_CPU_NAME=generic \
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    LIGHTTOUCH_DATA_ROOTS=/data
COPY --from=wheel /wheels /tmp/wheels
# pip check: the lock satisfies the project's requirements on this Python
RUN pip install --no-deps --no-index /tmp/wheels/*.whl && rm -rf /tmp/wheels && pip check
USER lighttouch
WORKDIR /home/lighttouch
# Compile every kernel a job can reach (worker/queue/warm_up.py), as the user that loads them;
# each worker loads them all again from this cache when it starts, before it forks a job.
RUN python -m worker.queue.warm_up
EXPOSE 8000
CMD ["lighttouch", "serve", "--host", "0.0.0.0", "--port", "8000"]
