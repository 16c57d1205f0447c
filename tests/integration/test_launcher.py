"""The launcher's user-facing failures: clear messages, nothing left running."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ragway_tools.launcher import LaunchError, Stack, StackConfig
from tests.conftest import FIXTURES


def config(tmp_path: Path, **overrides: object) -> StackConfig:
    return StackConfig.on_free_ports(
        tmp_path, **({"api_keys_file": FIXTURES / "api-keys.yaml"} | overrides)
    )


def test_a_taken_port_is_named_with_the_flag_to_change_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stack = Stack(config(tmp_path, gateway_port=port))
        with pytest.raises(LaunchError, match=rf"port {port} .* taken.*gateway.*--port"):
            stack.start_backends()
        assert stack.parts == []


def test_a_missing_key_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match=r"nope\.yaml not found"):
        Stack(config(tmp_path, api_keys_file=tmp_path / "nope.yaml")).start_backends()


def test_a_part_that_dies_while_starting_is_reported_with_its_log(tmp_path: Path) -> None:
    env = {"RAGWAY_RERANKER_PATH": str(tmp_path / "no-model")}
    stack = Stack(config(tmp_path, extra_env=env))
    started = stack.parts
    try:
        with pytest.raises(
            LaunchError, match=r"(?s)retriever exited .*reranker model folder not found"
        ) as err:
            stack.start_backends()
        assert "Traceback" not in str(err.value)
        started = list(stack.parts)
    finally:
        stack.stop()
    # Redis and the generator had started: stop() must not leave them running.
    assert {p.name for p in started} == {"redis", "retriever", "generator"}
    assert all(p.process.poll() is not None for p in started)


def test_a_second_ctrl_c_while_stopping_still_stops_everything_cleanly(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from ragway_tools.launcher import free_port

    ports = [str(free_port()) for _ in range(5)]
    flags = ["--port", "--redis-port", "--retriever-port", "--generator-port", "--ingest-port"]
    args = [a for pair in zip(flags, ports, strict=True) for a in pair]
    # No token in the environment: ragway up draws its own and must use it itself (the
    # demo knowledge base is loaded with it before "Press Ctrl-C to stop").
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWAY_SERVICE_TOKEN")}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ragway"), "up", *args, "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env | {"COLUMNS": "200"},
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "Press Ctrl-C to stop" in line:
            break
    else:
        pytest.fail("ragway up never became ready:\n" + "".join(lines))
    token_file = tmp_path / "secrets" / "service-token"
    assert any(f"Service token: {token_file}" in line for line in lines), lines
    assert token_file.stat().st_mode & 0o077 == 0 and len(token_file.read_text()) >= 32
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)  # inside the shutdown now
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert "All parts stopped." in out, out
    assert "Traceback" not in out, out
    assert proc.returncode == 0


def _ragway_up(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``ragway up`` on free ports with ``extra`` flags; returns it and the gateway URL."""
    from ragway_tools.launcher import free_port

    ports = [str(free_port()) for _ in range(5)]
    flags = ["--port", "--redis-port", "--retriever-port", "--generator-port", "--ingest-port"]
    args = [a for pair in zip(flags, ports, strict=True) for a in pair]
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "ragway"),
            "up",
            *args,
            "--data-dir",
            str(tmp_path),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ | {"COLUMNS": "200"},
    )
    return proc, f"http://127.0.0.1:{ports[0]}"


def test_up_with_an_own_key_file_authenticates_its_keys_and_not_the_demo_keys(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "my-keys.yaml"
    keys.write_text(
        "keys:\n"
        "  - id: mine\n"
        f"    sha256: {hashlib.sha256(b'my-own-key').hexdigest()}\n"
        "    tenant: demo\n"
        "    groups: [public]\n"
    )
    proc, url = _ragway_up(tmp_path / "var", "--api-keys", str(keys))
    assert proc.stdout is not None
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "Press Ctrl-C to stop" in line:
                break
        else:
            pytest.fail("ragway up never became ready:\n" + "".join(lines))
        out = "".join(lines)
        assert f"API keys from {keys}: mine" in out, out
        assert "rgw-demo-public-key" not in out, out  # not offered: it would not work
        question = {"question": "How do I rotate an API key?"}
        mine = httpx.post(
            f"{url}/v1/ask", json=question, headers={"Authorization": "Bearer my-own-key"}
        )
        assert mine.status_code == 200, mine.text
        assert mine.json()["run_id"], mine.text
        demo = httpx.post(
            f"{url}/v1/ask", json=question, headers={"Authorization": "Bearer rgw-demo-public-key"}
        )
        assert demo.status_code == 401, demo.text
        assert demo.json()["error"]["code"] == "invalid_api_key", demo.text
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=120)
    assert "All parts stopped." in rest, rest
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"API key file .*missing\.yaml not found"),
        ("keys: [", r"API key file .*bad\.yaml is not valid"),
        ("keys:\n  - id: x\n    sha256: nothex\n", r"(?s)bad\.yaml is not valid.*sha256"),
    ],
)
def test_up_rejects_a_missing_or_invalid_key_file_before_starting_anything(
    tmp_path: Path, content: str | None, message: str
) -> None:
    keys = tmp_path / ("missing.yaml" if content is None else "bad.yaml")
    if content is not None:
        keys.write_text(content)
    proc, _ = _ragway_up(tmp_path / "var", "--api-keys", str(keys))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert re.search(message, " ".join(out.split())), out
    assert "Traceback" not in out, out
    assert not (tmp_path / "var" / "logs").exists()  # nothing was started
