"""A local fake of the Telegram Bot API over HTTP, standing in for api.telegram.org
(which the tests cannot reach).

It implements what the bot uses: getMe, deleteWebhook, getUpdates (short long-polls),
sendMessage and editMessageText. Tests push user messages in with ``say`` and read what
the bot wrote from ``chat``; every call is kept in ``calls`` for inspection.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

BOT = {"id": 4242, "is_bot": True, "first_name": "ragway", "username": "ragway_test_bot"}


@dataclass
class BotMessage:
    message_id: int
    chat_id: int
    text: str
    parse_mode: str | None
    edits: list[str] = field(default_factory=list)  # every text it had, in order


class FakeBotApi:
    def __init__(self, token: str) -> None:
        self.token = token
        self.calls: list[tuple[str, dict[str, str]]] = []
        self.messages: list[BotMessage] = []
        self._updates: list[dict[str, Any]] = []
        self._next_update = 1
        self._next_message = 1000
        self._lock = threading.Condition()

    # -- what tests use ------------------------------------------------------
    def say(self, user_id: int, text: str) -> int:
        """A private message from ``user_id`` to the bot; returns its message id."""
        with self._lock:
            message_id = self._next_message
            self._next_message += 1
            message: dict[str, Any] = {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": {"id": user_id, "type": "private", "first_name": f"user{user_id}"},
                "from": {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"},
                "text": text,
            }
            if text.startswith("/"):
                length = len(text.split()[0])
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
            self._updates.append({"update_id": self._next_update, "message": message})
            self._next_update += 1
            self._lock.notify_all()
            return message_id

    def chat(self, user_id: int) -> list[BotMessage]:
        with self._lock:
            return [m for m in self.messages if m.chat_id == user_id]

    def wait_for(self, user_id: int, predicate: Any, timeout_s: float = 60) -> list[BotMessage]:
        """The chat once ``predicate(chat)`` holds; fails with the chat so far if it never does."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            chat = self.chat(user_id)
            if predicate(chat):
                return chat
            time.sleep(0.05)
        raise AssertionError(f"the bot never wrote what was expected; chat: {self.chat(user_id)}")

    def transcript(self) -> str:
        """Every exchange so far as Markdown, in order: what each user said, and each bot
        message as it ended (its streaming edits counted, not repeated)."""
        with self._lock:
            said = [(u["message"]["message_id"], u["message"]) for u in self._updates]
            wrote = [(m.message_id, m) for m in self.messages]
        lines = ["# Telegram bot: the test conversation", ""]
        lines += ["Recorded by tests/integration/test_telegram.py against the fake Bot API", ""]
        for _, item in sorted([*said, *wrote], key=lambda pair: pair[0]):
            if isinstance(item, BotMessage):
                edited = len(item.edits) - 1
                edits = f" (edited {edited} times)" if edited else ""
                lines.append(f"**bot → {item.chat_id}**{edits}:")
                lines += ["", *(f"> {line}" for line in item.text.splitlines()), ""]
            else:
                lines += [f"**user {item['from']['id']}:** {item['text']}", ""]
        return "\n".join(lines)

    # -- the Bot API ---------------------------------------------------------
    def call(self, method: str, params: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.calls.append((method, params))
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        return 200, {"ok": True, "result": handler(params)}

    def _api_getMe(self, params: dict[str, str]) -> Any:
        return BOT

    def _api_deleteWebhook(self, params: dict[str, str]) -> Any:
        return True

    def _api_getUpdates(self, params: dict[str, str]) -> Any:
        offset = int(params.get("offset", "0") or 0)
        # Long polling, but short: a stopping bot must not wait out Telegram's timeout.
        wait = min(float(params.get("timeout", "0") or 0), 0.5)
        with self._lock:
            self._lock.wait_for(lambda: self._pending(offset), timeout=wait)
            return self._pending(offset)

    def _pending(self, offset: int) -> list[dict[str, Any]]:
        return [u for u in self._updates if u["update_id"] >= offset]

    def _api_sendMessage(self, params: dict[str, str]) -> Any:
        with self._lock:
            message = BotMessage(
                self._next_message, int(params["chat_id"]), params["text"], params.get("parse_mode")
            )
            message.edits.append(message.text)
            self._next_message += 1
            self.messages.append(message)
            return self._json(message)

    def _api_editMessageText(self, params: dict[str, str]) -> Any:
        with self._lock:
            message = next(m for m in self.messages if m.message_id == int(params["message_id"]))
            message.text = params["text"]
            message.parse_mode = params.get("parse_mode")
            message.edits.append(message.text)
            return self._json(message)

    def _json(self, message: BotMessage) -> dict[str, Any]:
        return {
            "message_id": message.message_id,
            "date": int(time.time()),
            "chat": {"id": message.chat_id, "type": "private"},
            "from": BOT,
            "text": message.text,
        }


@contextmanager
def serve_fake_bot_api(token: str) -> Iterator[tuple[FakeBotApi, str]]:
    """The fake on a free loopback port: (fake, its base URL for RAGWAY_TELEGRAM_API_URL)."""
    fake = FakeBotApi(token)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            prefix = f"/bot{fake.token}/"
            if not self.path.startswith(prefix):
                status, body = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
            else:
                length = int(self.headers.get("Content-Length", "0"))
                params = dict(parse_qsl(self.rfile.read(length).decode()))
                status, body = fake.call(self.path[len(prefix) :], params)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the request line holds the token

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
