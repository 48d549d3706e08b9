# syntax=docker/dockerfile:1
# LightTouch: one image for the API ("lighttouch serve") and the workers ("lighttouch worker").
ARG PYTHON_VERSION=3.11

# --- build: install the package and its dependencies into a virtualenv -------------------------
FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/lighttouch
WORKDIR /src
COPY pyproject.toml README.md ./
COPY worker ./worker
COPY service ./service
RUN /opt/lighttouch/bin/pip install .

# --- runtime: the virtualenv only, a non-root user, numba kernels compiled at build -----------
FROM python:${PYTHON_VERSION}-slim AS runtime
RUN useradd --system --uid 10001 --create-home --home-dir /home/lighttouch lighttouch \
    && mkdir /data && chown lighttouch /data
COPY --from=build /opt/lighttouch /opt/lighttouch
# One thread per work horse (scale with more workers, not threads): no numba or BLAS thread
# pool exists before RQ forks a horse, and horses on one machine do not oversubscribe it.
ENV PATH=/opt/lighttouch/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/home/lighttouch/numba-cache \
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    LIGHTTOUCH_DATA_ROOTS=/data
USER lighttouch
WORKDIR /home/lighttouch
# Compile every kernel once, as the user that will load them; workers then start warm.
RUN python -c "from worker.queue.workers import warm_up; warm_up()"
EXPOSE 8000
CMD ["lighttouch", "serve", "--host", "0.0.0.0", "--port", "8000"]
