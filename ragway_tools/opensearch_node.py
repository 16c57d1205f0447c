"""A real single-node OpenSearch on loopback, from the launcher in deploy/opensearch-test-node.

``make opensearch-node`` builds the launcher (Maven: OpenSearch 2.19's server,
Netty4 and analysis-common jars, plus one Java class); this module starts it as
a child process on a free port, waits for the HTTP port it reports and for a
yellow cluster, and stops it with SIGTERM (the JVM closes the node on the way
out). The backend tests and ``ragway opensearch-node`` use it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType

import httpx

LAUNCHER = Path(__file__).resolve().parent.parent / "deploy" / "opensearch-test-node"
MAIN_CLASS = "org.ragway.opensearch.TestNode"


class NodeUnavailableError(RuntimeError):
    """The node could not be built, started or reached; the message says why."""


def classpath(launcher: Path = LAUNCHER) -> str:
    classes = launcher / "target" / "classes"
    lib = launcher / "target" / "lib"
    main = classes / (MAIN_CLASS.replace(".", "/") + ".class")
    if not main.exists() or not any(lib.glob("opensearch-*.jar")):
        raise NodeUnavailableError(
            f"the OpenSearch test node is not built ({main} or {lib}/opensearch-*.jar missing): "
            "run 'make opensearch-node' (needs Java 17 and Maven)"
        )
    return f"{classes}{os.pathsep}{lib}/*"


class OpenSearchNode:
    """One node; ``with OpenSearchNode(home) as node: node.url`` starts and stops it."""

    def __init__(
        self,
        home: Path,
        *,
        port: int = 0,
        heap: str = "512m",
        start_timeout_s: float = 180.0,
        java: str | None = None,
    ) -> None:
        self.home = home
        self.port = port
        self.heap = heap
        self.start_timeout_s = start_timeout_s
        self.java = java or shutil.which("java") or "java"
        self._proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    @property
    def log_path(self) -> Path:
        return self.home / "node.log"

    def start(self) -> str:
        self.home.mkdir(parents=True, exist_ok=True)
        port_file = self.home / "http.port"
        port_file.unlink(missing_ok=True)
        command = [
            self.java,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            # The distribution's jvm.options would set these; they keep a small
            # test node from writing heap dumps or JMX state into the repo.
            "-XX:-HeapDumpOnOutOfMemoryError",
            "-Dlog4j2.disable.jmx=true",
            "-Dopensearch.networkaddress.cache.ttl=60",
            "-Dio.netty.noUnsafe=true",
            "-cp",
            classpath(),
            MAIN_CLASS,
            "--home",
            str(self.home),
            "--http-port",
            str(self.port),
            "--port-file",
            str(port_file),
        ]
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout_s
        while not port_file.exists():
            self._check_alive()
            if time.monotonic() > deadline:
                self.stop()
                raise NodeUnavailableError(self._explain("did not open its HTTP port"))
            time.sleep(0.2)
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}"
        self._wait_for_health(deadline)
        return self.url

    def stop(self, timeout_s: float = 30.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def wait(self) -> int:
        """Block until the node exits; its exit status."""
        assert self._proc is not None, "start() first"
        return self._proc.wait()

    def __enter__(self) -> OpenSearchNode:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _wait_for_health(self, deadline: float) -> None:
        last = ""
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                reply = httpx.get(
                    f"{self.url}/_cluster/health",
                    params={"wait_for_status": "yellow", "timeout": "5s"},
                    timeout=10,
                )
                if reply.status_code == 200 and reply.json()["status"] in ("yellow", "green"):
                    return
                last = f"HTTP {reply.status_code}: {reply.text[:200]}"
            except httpx.HTTPError as e:
                last = repr(e)
            time.sleep(0.5)
        self.stop()
        raise NodeUnavailableError(self._explain(f"never reported a healthy cluster ({last})"))

    def _check_alive(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            code = self._proc.returncode
            self._proc = None
            raise NodeUnavailableError(self._explain(f"exited with status {code}"))

    def _explain(self, what: str) -> str:
        tail = ""
        if self.log_path.exists():
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
        return f"OpenSearch test node in {self.home} {what}; last lines of {self.log_path}:\n{tail}"
