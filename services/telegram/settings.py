"""The bot's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ragway.settings import ServiceSettings


class TelegramSettings(ServiceSettings):
    # The token is read from this file, never from the environment, and never logged.
    telegram_token_file: Path | None = None
    telegram_allowlist_file: Path = Path("config/telegram-users.yaml")
    # The Bot API endpoint; tests point it at a local fake (api.telegram.org is out of reach).
    telegram_api_url: str = "https://api.telegram.org"
    gateway_url: str = "http://127.0.0.1:8000"
    # Prefix for source urls that are paths (the knowledge base stores "/docs/..."); empty
    # leaves them as text, since Telegram only links absolute URLs.
    telegram_source_base_url: str = ""
    # Telegram allows about one edit per second in a chat; more get 429s.
    telegram_edit_interval_s: float = Field(default=1.0, ge=0.05, le=60)
    telegram_gateway_timeout_s: float = Field(default=60.0, gt=0, le=600)

    def token(self) -> str:
        if self.telegram_token_file is None:
            raise ValueError("RAGWAY_TELEGRAM_TOKEN_FILE is not set: the bot needs a token file")
        try:
            token = self.telegram_token_file.read_text().strip()
        except OSError as exc:
            raise ValueError(
                f"cannot read the bot token file {self.telegram_token_file}: {exc.strerror}"
            ) from None
        if not token:
            raise ValueError(f"the bot token file {self.telegram_token_file} is empty")
        return token
