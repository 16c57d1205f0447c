"""The evidence console as a Gradio Blocks app inside the gateway (docs/channels.md).

The console is a client of the gateway's own HTTP API, called in process through the
whole ASGI stack (the API guard, rate limits, scopes), with the key its user logged in
with: it sees exactly what that key may see, and nothing else. The login is the key's
id and the key itself; server and admin keys log in, a widget key (public) does not.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import httpx
from fastapi import FastAPI

from services.gateway.auth import AuthError, KeyRegistry
from services.gateway.console import render

# Before gradio is imported: it reads these at import time. No analytics and no
# version check over the network: the console makes no call outside the gateway.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import gradio as gr

log = logging.getLogger(__name__)

PATH = "/console"
CHANNEL = "console"


class Logins:
    """The keys the console's users logged in with, by key id: a console call runs with
    its user's key, and Gradio hands the handlers only the login's user name."""

    def __init__(self, registry: KeyRegistry) -> None:
        self._registry = registry
        self._keys: dict[str, str] = {}

    def check(self, username: str, password: str) -> bool:
        try:
            principal = self._registry.authenticate(password, None)
        except AuthError as exc:
            log.info("console login refused", extra={"key_id": username, "code": exc.code})
            return False
        if principal.key_id != username or principal.kind == "widget":
            log.info("console login refused", extra={"key_id": username, "code": principal.kind})
            return False
        self._keys[username] = password
        log.info("console login", extra={"key_id": username})
        return True

    def key(self, request: gr.Request) -> str:
        username = request.username
        if username is None or username not in self._keys:
            raise gr.Error("Log in again: the console no longer knows your key.")
        return self._keys[username]


class Api:
    """The gateway's HTTP API, in process: ``/v1`` through every middleware."""

    def __init__(self, app: FastAPI, timeout_s: float) -> None:
        self._http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://gateway", timeout=timeout_s
        )

    async def call(
        self, key: str, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, str]:
        """(the JSON reply, "") or (None, the API's error message)."""
        reply = await self._http.request(
            method, path, json=body, headers={"Authorization": f"Bearer {key}"}
        )
        data: Any = reply.json()
        if reply.status_code >= 400:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            return None, f"{reply.status_code} {error.get('code')}: {error.get('message')}"
        return data, ""


def build(app: FastAPI, logins: Logins, ask_timeout_s: float) -> gr.Blocks:
    api = Api(app, ask_timeout_s + 5)

    async def run_panels(key: str, run_id: str) -> tuple[str, str, str, str]:
        run, error = await api.call(key, "GET", f"/v1/runs/{run_id}")
        if run is None:
            return error, "", "", ""
        return f"Run {run['id']}: {run['status']}", *_panels(run)

    async def ask(
        question: str, history: list[dict[str, str]], conversation: str, request: gr.Request
    ) -> tuple[list[dict[str, str]], str, str, str, str, str, str, str]:
        key = logins.key(request)
        question = question.strip()
        if not question:
            return history, conversation, "", "", "Type a question.", "", "", ""
        body: dict[str, Any] = {"question": question, "channel": CHANNEL}
        if conversation:
            body["conversation_id"] = conversation
        reply, error = await api.call(key, "POST", "/v1/ask", body)
        if reply is None:
            return history, conversation, question, "", error, "", "", ""
        status, answer, evidence, debug = await run_panels(key, str(reply["run_id"]))
        history = [
            *history,
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer or status},
        ]
        return (
            history, str(reply.get("conversation_id") or ""), "", str(reply["run_id"]),
            status, answer, evidence, debug,
        )  # fmt: skip

    async def lookup(run_id: str, request: gr.Request) -> tuple[str, str, str, str, str]:
        key = logins.key(request)
        run_id = run_id.strip()
        if not run_id:
            return "", "Paste a run id.", "", "", ""
        return run_id, *(await run_panels(key, run_id))

    async def feedback(run_id: str, rating: str, comment: str, request: gr.Request) -> str:
        key = logins.key(request)
        if not run_id.strip():
            return "Ask or look up a run first."
        body: dict[str, Any] = {"rating": rating}
        if comment.strip():
            body["comment"] = comment.strip()
        reply, error = await api.call(key, "POST", f"/v1/runs/{run_id.strip()}/feedback", body)
        if reply is None:
            return error
        return f"Feedback {reply['rating']} recorded on {reply['run_id']}."

    def new_conversation() -> tuple[list[dict[str, str]], str]:
        return [], ""

    blocks = gr.Blocks(title="ragway evidence console", analytics_enabled=False)
    with blocks:
        gr.Markdown("## ragway evidence console")
        with gr.Row():
            with gr.Column(scale=2):
                chat = gr.Chatbot(label="Conversation", elem_id="chat")
                # A component, not gr.State: API clients see and pass it too.
                conversation = gr.Textbox(
                    label="Conversation id", interactive=False, elem_id="conversation"
                )
                question = gr.Textbox(label="Question", elem_id="question")
                with gr.Row():
                    ask_button = gr.Button("Ask", variant="primary", elem_id="ask")
                    new_button = gr.Button("New conversation", elem_id="new")
                run_id = gr.Textbox(label="Run id", elem_id="run-id")
                lookup_button = gr.Button("Look up run", elem_id="lookup")
                status = gr.Markdown(elem_id="status")
                answer = gr.Markdown(label="Answer", elem_id="answer")
                with gr.Row():
                    rating = gr.Radio(["up", "down"], value="up", label="Feedback")
                    comment = gr.Textbox(label="Comment", elem_id="comment")
                feedback_button = gr.Button("Send feedback", elem_id="send-feedback")
                feedback_status = gr.Markdown(elem_id="feedback-status")
            with gr.Column(scale=3):
                gr.Markdown("### Evidence given to the generator")
                evidence = gr.HTML(elem_id="evidence")
                gr.Markdown("### Debug path")
                debug = gr.HTML(elem_id="debug")
        panels = [status, answer, evidence, debug]
        ask_button.click(
            ask,
            [question, chat, conversation],
            [chat, conversation, question, run_id, *panels],
            api_name="ask",
        )
        lookup_button.click(lookup, [run_id], [run_id, *panels], api_name="lookup")
        feedback_button.click(
            feedback, [run_id, rating, comment], [feedback_status], api_name="feedback"
        )
        new_button.click(new_conversation, None, [chat, conversation], api_name="new")
    return blocks


def _panels(run: dict[str, Any]) -> tuple[str, str, str]:
    return render.answer_markdown(run), render.evidence_html(run), render.debug_html(run)


def mount(app: FastAPI, registry: KeyRegistry, ask_timeout_s: float) -> None:
    """Mount the console at /console behind its login (never share=True: no tunnel)."""
    logins = Logins(registry)
    gr.mount_gradio_app(  # mounts on ``app`` itself (and returns it)
        app,
        build(app, logins, ask_timeout_s),
        path=PATH,
        auth=logins.check,
        auth_message="Log in with an API key: its id as the user name, the key as the password.",
        # System fonts: the default theme would load its fonts from Google's servers.
        theme=gr.themes.Default(
            font=["ui-sans-serif", "system-ui", "sans-serif"],
            font_mono=["ui-monospace", "monospace"],
        ),
        ssr_mode=False,  # no Node.js server beside the gateway
        mcp_server=False,
        enable_monitoring=False,
    )
