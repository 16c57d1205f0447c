"""One real stack for the integration suite: Redis server, retriever, generator, gateway.

Every part is a separate process on loopback, on free ports, started by the same
launcher code as ``make up``. The demo knowledge base (docs/, kb/demo/) and the
multi-tenant fixtures (tests/fixtures/kb/) are loaded through the retriever.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragway.kb import Defaults, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents
from tests.conftest import FIXTURES, ROOT
from tests.llm_servers import (
    Endpoint,
    LlamaServer,
    require_llama_cpp,
    serve_endpoint,
    smollm2_path,
)

KEYS = {
    "acme": "key-acme-staff",
    "acme-hr": "key-acme-hr",
    "globex": "key-globex-staff",
    "demo": "key-demo-public",
    "disabled": "key-acme-disabled",
    "demo-sre": "key-demo-sre",
    "initech": "key-initech-staff",
    "initech-legal": "key-initech-legal",
    "hostile": "key-hostile",
}


def auth(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[who]}"}


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("stack")
    config = StackConfig.on_free_ports(data, api_keys_file=FIXTURES / "api-keys.yaml")
    s = Stack(config)
    try:
        s.start_backends()
        docs = [
            parse_document(path, root, Defaults(tenant="demo", groups=("public",)))
            for path, root in discover([ROOT / "docs", ROOT / "kb/demo", FIXTURES / "kb"])
        ]
        load_documents(config.retriever_addr, docs, token=config.service_token)
        s.start_gateway()
        yield s
    finally:
        s.stop()
    # An unhandled exception in any service is a bug, even if every request passed.
    for part in ("gateway", "retriever", "generator"):
        text = (data / "logs" / f"{part}.log").read_text()
        assert "Traceback" not in text, f"{part} logged a traceback:\n{text[-4000:]}"


@contextlib.contextmanager
def redis_alone(data: Path) -> Iterator[Stack]:
    """A Redis of its own and nothing else: for tests of the code that talks to Redis."""
    s = Stack(StackConfig.on_free_ports(data))
    s.logs_dir.mkdir(parents=True)
    s.start_redis()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def redis_only(tmp_path: Path) -> Iterator[Stack]:
    with redis_alone(tmp_path) as s:
        yield s


@pytest.fixture
def redis_url(redis_only: Stack) -> str:
    return redis_only.config.redis_url


@contextlib.contextmanager
def own_redis(shared: Stack, data: Path, env: dict[str, str]) -> Iterator[Stack]:
    """A stack with its own Redis (started) and settings, on the session's retriever and
    generator: for tests that restart gateways or change gateway settings."""
    config = StackConfig.on_free_ports(
        data,
        retriever_port=shared.config.retriever_port,
        generator_port=shared.config.generator_port,
        service_token=shared.config.service_token,
        api_keys_file=FIXTURES / "api-keys.yaml",
        extra_env=env,
    )
    s = Stack(config)
    s.logs_dir.mkdir(parents=True)
    try:
        s.start_redis()
        yield s
    finally:
        s.stop()


@pytest.fixture
def api(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.config.gateway_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server with the packaged SmolLM2 model."""
    require_llama_cpp()
    server = LlamaServer(tmp_path_factory.mktemp("llama") / "server.log", smollm2_path())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llm_endpoint() -> Iterator[Endpoint]:
    """An OpenAI-compatible endpoint whose replies each test lines up."""
    yield from serve_endpoint()
