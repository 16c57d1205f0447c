"""What the gateway takes as a question's text (services/gateway/api/schemas.py)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from services.gateway.api import errors
from services.gateway.api.schemas import RunRequest


@pytest.fixture(scope="module")
def client() -> TestClient:
    # The gateway's own error handlers over a route that takes the /v1/ask body.
    app = FastAPI()
    errors.install(app)

    @app.post("/ask")
    async def ask(body: RunRequest) -> str:
        return body.question

    return TestClient(app)


@pytest.mark.parametrize(
    ("text", "code_point"),
    [("port\x00number", "U+0000"), ("a\x1b[31mred", "U+001B"), ("x\x7f", "U+007F")],
)
def test_a_question_with_a_control_character_is_refused_with_the_character_named(
    client: TestClient, text: str, code_point: str
) -> None:
    # A NUL was taken and answered (200) as if it were a letter of the question.
    resp = client.post("/ask", json={"question": text})
    assert resp.status_code == 422
    error = resp.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith("question: ")
    assert f"control character {code_point}" in error["message"]


def test_tabs_line_breaks_and_any_printable_text_stay_a_question(client: TestClient) -> None:
    for text, kept in [
        ("line one\nline two\tand a tab", "line one\nline two\tand a tab"),
        ("  café ☕ déjà vu  \r\n", "café ☕ déjà vu"),
        ("¿Cuál es el puerto?", "¿Cuál es el puerto?"),
    ]:
        resp = client.post("/ask", json={"question": text})
        assert resp.status_code == 200, resp.text
        assert resp.json() == kept


def test_typographic_quotes_are_taken_as_their_ascii_forms(client: TestClient) -> None:
    # An iPhone types "What\u2019s": the question rules (ragway/question.py) read
    # "What's", and "What\u2019s the phone number for \u2026" was not typed as asking
    # for a phone number.
    resp = client.post(
        "/ask", json={"question": "What\u2019s the team\u2019s \u201cPro\u201d phone number?"}
    )
    assert resp.status_code == 200, resp.text
    assert resp.json() == "What's the team's \"Pro\" phone number?"
