"""The bot's handlers: check the allow-list, ask the gateway, stream the answer by editing
one message (at most one edit per interval), finish with the sources."""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from datetime import timedelta
from typing import Any

from telegram import LinkPreviewOptions, Message, Update
from telegram.constants import ParseMode
from telegram.error import RetryAfter, TelegramError
from telegram.ext import Application, CommandHandler, ContextTypes, MessageHandler, filters
from telegram.warnings import PTBDeprecationWarning

from services.telegram import render
from services.telegram.allowlist import AllowList, Grant
from services.telegram.gateway import (
    ACCEPTED,
    GatewayClient,
    GatewayRejected,
    GatewayUnavailable,
)
from services.telegram.settings import TelegramSettings

log = logging.getLogger(__name__)

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
# The longest retry-after the final edit waits out; beyond it the user would be better
# served by nothing than by an answer that arrives minutes late.
MAX_RETRY_WAIT_S = 30.0


class Channel:
    def __init__(
        self, allowlist: AllowList, gateway: GatewayClient, settings: TelegramSettings
    ) -> None:
        self.allowlist = allowlist
        self.gateway = gateway
        self.settings = settings
        # The conversation of each Telegram chat: its questions are follow-ups of one
        # another until /new. In memory: a restarted bot starts every chat afresh.
        self.conversations: dict[int, str] = {}

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if (grant := await self._admit(update)) is None:
            return
        message = update.effective_message
        if message is not None:
            await message.reply_text(
                "Ask me a question and I will answer from the knowledge base, with its sources."
            )
        log.info("telegram start", extra={"telegram_id": grant.telegram_id})

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/new: the chat's next question starts a new conversation."""
        if (grant := await self._admit(update)) is None:
            return
        chat = update.effective_chat
        if chat is not None:
            self.conversations.pop(chat.id, None)
        message = update.effective_message
        if message is not None:
            await message.reply_text(render.NEW_CONVERSATION)
        log.info("telegram new conversation", extra={"telegram_id": grant.telegram_id})

    async def question(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or not message.text:
            return
        if (grant := await self._admit(update)) is None:
            return
        reply = await message.reply_text(render.WAITING)
        await Exchange(self, grant, reply, message.chat_id).run(message.text)

    async def _admit(self, update: Update) -> Grant | None:
        """The user's grant, or a polite refusal before anything is retrieved."""
        user = update.effective_user
        grant = self.allowlist.grant(user.id if user else None)
        if grant is None:
            user_id = user.id if user else None
            # By id only: names and message text of strangers stay out of the logs.
            log.info("telegram user not allowed", extra={"telegram_id": user_id})
            if update.effective_message is not None:
                await update.effective_message.reply_text(
                    render.NOT_ALLOWED.format(user_id=user_id)
                )
        return grant


class Exchange:
    """One question: the reply message edited as deltas arrive, then finished."""

    def __init__(self, channel: Channel, grant: Grant, reply: Message, chat_id: int) -> None:
        self.channel = channel
        self.grant = grant
        self.reply = reply
        self.chat_id = chat_id
        self.shown = render.WAITING
        self.next_edit = 0.0
        self.run_id = ""
        self.answer: dict[str, Any] | None = None
        self.failure: str | None = None

    async def run(self, question: str) -> None:
        started = time.monotonic()
        conversations = self.channel.conversations
        failure: str | None = None
        try:
            try:
                await self._follow(question, conversations.get(self.chat_id))
            except GatewayRejected as exc:
                # The chat's conversation expired (404) or is full (409): refused before
                # any run started, so the question simply starts a new conversation.
                if self.run_id or exc.status not in (404, 409) or self.chat_id not in conversations:
                    raise
                conversations.pop(self.chat_id, None)
                log.info(
                    "telegram conversation restarted",
                    extra={"telegram_id": self.grant.telegram_id, "code": exc.code},
                )
                await self._follow(question, None)
            failure = self.failure
        except GatewayUnavailable as exc:
            log.warning(
                "gateway unavailable",
                extra={"telegram_id": self.grant.telegram_id, "error": str(exc)},
            )
            failure = render.UNAVAILABLE
        except GatewayRejected as exc:
            log.warning(
                "gateway rejected the question",
                extra={
                    "telegram_id": self.grant.telegram_id,
                    "status": exc.status,
                    "code": exc.code,
                },
            )
            failure = f"The knowledge service refused this question: {exc.message}"
        log.info(
            "telegram exchange",
            extra={
                "telegram_id": self.grant.telegram_id,
                "key_id": self.grant.key_id,
                "run_id": self.run_id,
                "refused": bool(self.answer and self.answer.get("refused")),
                "failed": failure is not None,
                "ms": round((time.monotonic() - started) * 1000),
            },
        )
        if failure is not None or self.answer is None:
            await self._edit(failure or render.UNAVAILABLE, force=True)
            return
        await self._finish(self.answer)

    async def _follow(self, question: str, conversation_id: str | None) -> None:
        """Ask, and show the answer's deltas as they arrive; the outcome lands on self."""
        text = ""
        ask = self.channel.gateway.ask(self.grant.api_key, question, conversation_id)
        async for event in ask:
            if event.type == ACCEPTED:
                self.run_id = str(event.data.get("run_id", ""))
                if conversation := event.data.get("conversation_id"):
                    self.channel.conversations[self.chat_id] = str(conversation)
            elif event.type == "answer.delta":
                text += str(event.data.get("text", ""))
                await self._edit(render.preview(text))
            elif event.type == "answer.reset" or (
                event.type == "run.started" and event.data.get("restarted")
            ):
                text = ""
            elif event.type == "answer.completed":
                self.answer = event.data
            elif event.type in ("run.failed", "run.cancelled"):
                error = event.data.get("error") or {}
                self.failure = render.FAILED.format(code=error.get("code", event.type))

    async def _edit(self, text: str, *, force: bool = False, html: bool = False) -> None:
        """Show ``text``: a streaming edit is skipped when too soon; a forced one (the final
        answer, an error) waits out one retry-after from Telegram, bounded, then retries."""
        now = time.monotonic()
        if text == self.shown or (not force and now < self.next_edit):
            return
        for attempt in (1, 2):
            try:
                await self.reply.edit_text(
                    text,
                    parse_mode=ParseMode.HTML if html else None,
                    link_preview_options=NO_PREVIEW,
                )
                break
            except RetryAfter as exc:
                # Over Telegram's edit limit: a streaming edit is dropped (a later one
                # carries the text); the final one waits once.
                wait = _seconds(exc)
                self.next_edit = now + wait
                if force and (attempt == 2 or wait > MAX_RETRY_WAIT_S):
                    raise
                if not force:
                    return
                await asyncio.sleep(wait)
            except TelegramError as exc:
                if force:
                    raise
                log.warning("telegram edit failed", extra={"error": type(exc).__name__})
                return
        self.shown = text
        self.next_edit = time.monotonic() + self.channel.settings.telegram_edit_interval_s

    async def _finish(self, answer: dict[str, Any]) -> None:
        messages = render.final_messages(answer, self.channel.settings.telegram_source_base_url)
        await self._edit(messages[0], force=True, html=True)
        for extra in messages[1:]:
            await self.reply.reply_text(
                extra, parse_mode=ParseMode.HTML, link_preview_options=NO_PREVIEW
            )


def _seconds(exc: RetryAfter) -> float:
    """Its retry_after: an int, or a timedelta once PTB_TIMEDELTA is set."""
    with warnings.catch_warnings():  # reading it as an int is what v22 deprecates
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait: object = exc.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(str(wait))


async def _on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    log.error("telegram handler failed", exc_info=context.error)


def build_application(
    settings: TelegramSettings, token: str, channel: Channel
) -> Application[Any, Any, Any, Any, Any, Any]:
    api = settings.telegram_api_url.rstrip("/")

    async def ready(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        # After getMe answered: the launcher waits for this line.
        log.info("telegram bot ready", extra={"bot": app.bot.username})

    async def close_gateway(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        await channel.gateway.close()

    app = (
        Application.builder()
        .token(token)
        .base_url(f"{api}/bot")
        .base_file_url(f"{api}/file/bot")
        .concurrent_updates(True)  # one slow answer must not hold up the next user
        .post_init(ready)
        .post_shutdown(close_gateway)
        .build()
    )
    app.add_handler(CommandHandler("start", channel.start))
    app.add_handler(CommandHandler("new", channel.new))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, channel.question))
    app.add_error_handler(_on_error)
    return app
