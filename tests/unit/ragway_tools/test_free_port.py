"""free_port: the ports the tests and benchmarks start their stacks on."""

from __future__ import annotations

import socket

import pytest

from ragway_tools import launcher
from ragway_tools.launcher import ephemeral_range, free_port


def test_ports_lie_below_the_ephemeral_range() -> None:
    # A port inside the range can be taken as the local port of any outgoing
    # connection between the choice and the bind (the CI failure this guards).
    low, _ = ephemeral_range()
    ports = [free_port() for _ in range(50)]
    assert all(launcher._LOWEST_PORT <= p < low for p in ports)


def test_no_port_is_handed_out_twice() -> None:
    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)


def test_a_bound_port_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        monkeypatch.setattr(launcher, "_LOWEST_PORT", port)
        # The only candidate is taken: the kernel's choice, never the taken port.
        monkeypatch.setattr(launcher, "ephemeral_range", lambda: (port + 1, 60999))
        monkeypatch.setattr(launcher, "_HANDED_OUT", set())
        assert free_port() != port
