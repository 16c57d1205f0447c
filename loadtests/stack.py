"""The stack under load: one Redis server, retriever and generator, N gateway replicas.

Started with the same launcher as ``make up`` on free ports, with the demo
knowledge base loaded. The fault operations live here too, so the injector only
says *when*; each one returns once the fault is in place (or undone).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from ragway.kb import Defaults, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig, free_port
from ragway_tools.loading import load_documents

ROOT = Path(__file__).resolve().parent.parent
DEMO_KB = [ROOT / "docs", ROOT / "kb" / "demo"]
LOG_PARTS = ("redis", "retriever", "generator")


class LoadStack:
    def __init__(self, data_dir: Path, replicas: int, env: dict[str, str]) -> None:
        self.data_dir = data_dir
        self.fault_file = (data_dir / "generator-faults.json").resolve()
        ports = [free_port() for _ in range(replicas)]
        self.config = StackConfig.on_free_ports(
            data_dir,
            gateway_port=ports[0],
            api_keys_file=ROOT / "config" / "api-keys.yaml",
            extra_env={
                "RAGWAY_FAULT_FILE": str(self.fault_file),
                # One key carries the whole load: the load test measures the pipeline,
                # not the rate limiter (a scenario's env may still set them).
                "RAGWAY_REQUESTS_PER_MINUTE": "1000000",
                "RAGWAY_RUNS_PER_MINUTE": "1000000",
                "RAGWAY_TENANT_REQUESTS_PER_MINUTE": "1000000",
                "RAGWAY_TENANT_RUNS_PER_MINUTE": "1000000",
                "RAGWAY_STREAMS_PER_KEY": "1000000",  # bench-capacity: 2,000 streams
                "RAGWAY_STREAMS_PER_TENANT": "1000000",
                **env,
            },
        )
        self.replica_ports = ports
        self.stack = Stack(self.config)

    @property
    def urls(self) -> list[str]:
        return [f"http://{self.config.host}:{p}" for p in self.replica_ports]

    @property
    def redis_port(self) -> int:
        return self.config.redis_port

    @property
    def redis_url(self) -> str:
        """With the stack's password (never log it)."""
        return self.config.redis_url

    def replica_name(self, index: int) -> str:
        return "gateway" if index == 0 else f"gateway-{index}"

    def start(self) -> None:
        self.stack.start_backends()
        docs = [
            parse_document(path, root, Defaults(tenant="demo", groups=("public",)))
            for path, root in discover(DEMO_KB)
        ]
        load_documents(self.config.retriever_addr, docs, token=self.config.service_token)
        for i, port in enumerate(self.replica_ports):
            self.stack.start_gateway(self.replica_name(i), port)

    def stop(self) -> None:
        self.stack.stop()

    # -- faults ------------------------------------------------------------
    def kill_gateway(self, index: int) -> None:
        self.stack.kill(self.replica_name(index), signal.SIGKILL)

    def start_gateway(self, index: int) -> None:
        self.stack.start_gateway(self.replica_name(index), self.replica_ports[index])

    def freeze_gateway(self, index: int) -> None:
        os.kill(self.stack.part(self.replica_name(index)).process.pid, signal.SIGSTOP)

    def thaw_gateway(self, index: int) -> None:
        os.kill(self.stack.part(self.replica_name(index)).process.pid, signal.SIGCONT)

    def pause_retriever(self) -> None:
        os.kill(self.stack.part("retriever").process.pid, signal.SIGSTOP)

    def resume_retriever(self) -> None:
        os.kill(self.stack.part("retriever").process.pid, signal.SIGCONT)

    def stop_redis(self, sig: signal.Signals) -> None:
        self.stack.kill("redis", sig)

    def start_redis(self) -> None:
        self.stack.start_redis()  # same --dir: the AOF is replayed

    def slow_generator(self, delta_delay_ms: int) -> None:
        # Write-then-rename: the generator never reads a half-written file.
        tmp = self.fault_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"delta_delay_ms": delta_delay_ms}))
        tmp.replace(self.fault_file)

    def clear_generator_faults(self) -> None:
        self.fault_file.unlink(missing_ok=True)

    def log_files(self) -> dict[str, Path]:
        names = [*LOG_PARTS, *(self.replica_name(i) for i in range(len(self.replica_ports)))]
        return {name: self.stack.logs_dir / f"{name}.log" for name in names}
