"""``ragway paths set`` and ``list`` against a stand-in admin API: what goes out, what shows."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from ragway_tools.cli import app

ARTIFACT = "reranker-lumen-20261203-040040-60d2655d"
STORED = {
    "name": "candidate", "version": 3, "build": "", "build_id": "", "mode": None, "top_k": None,
    "candidate_depth": None, "rerank": "default", "reranker": ARTIFACT, "rerank_weight": 0.3,
    "rerank_skip_margin": 0.008, "max_output_tokens": None, "min_support": None,
    "prompt_label": "",
}  # fmt: skip


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
        calls.append({"method": method, "url": url, **kwargs})
        body = [STORED] if method == "GET" else STORED
        return httpx.Response(200, json=body, request=httpx.Request(method, url))

    monkeypatch.setattr(httpx, "request", request)  # as the commands call it
    return calls


def test_paths_set_sends_the_blend_and_leaves_it_unset_when_not_given(
    sent: list[dict[str, Any]],
) -> None:
    result = CliRunner().invoke(
        app,
        ["paths", "set", "candidate", "--reranker", ARTIFACT, "--rerank-weight", "0.3",
         "--rerank-skip-margin", "0.008"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    body = sent[0]["json"]
    assert (body["reranker"], body["rerank_weight"], body["rerank_skip_margin"]) == (
        ARTIFACT, 0.3, 0.008,
    )  # fmt: skip
    plain = CliRunner().invoke(app, ["paths", "set", "candidate"])
    assert plain.exit_code == 0, plain.output
    assert sent[1]["json"]["rerank_weight"] is None  # the gateway's unset: the retriever's
    assert sent[1]["json"]["rerank_skip_margin"] is None


@pytest.mark.parametrize("option", [["--rerank-weight", "1.5"], ["--rerank-skip-margin", "-2"]])
def test_paths_set_refuses_a_blend_out_of_range_before_asking(
    sent: list[dict[str, Any]], option: list[str]
) -> None:
    result = CliRunner().invoke(app, ["paths", "set", "candidate", *option])
    assert result.exit_code == 2 and not sent


def test_paths_list_shows_the_blend(sent: list[dict[str, Any]]) -> None:
    result = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["paths", "list"])
    assert result.exit_code == 0, result.output
    assert "skip margin" in result.output
    [row] = [line for line in result.output.splitlines() if "candidate" in line]
    assert "0.3" in row and "0.008" in row
