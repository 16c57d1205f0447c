"""``python -m services.telegram``: poll the Bot API and answer until SIGTERM."""

from __future__ import annotations

import logging
import sys

from telegram import Update

from ragway import logs
from services.telegram.allowlist import AllowList
from services.telegram.bot import Channel, build_application
from services.telegram.gateway import GatewayClient
from services.telegram.settings import TelegramSettings

log = logging.getLogger("services.telegram")


def main() -> int:
    settings = TelegramSettings()
    logs.configure("telegram", settings.log_level, settings.log_format)
    # httpx logs every request URL at INFO, and Bot API URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        token = settings.token()
        allowlist = AllowList.from_file(settings.telegram_allowlist_file)
    except ValueError as exc:
        sys.stderr.write(f"telegram: {exc}\n")
        return 2
    gateway = GatewayClient(settings.gateway_url, settings.telegram_gateway_timeout_s)
    app = build_application(settings, token, Channel(allowlist, gateway, settings))
    log.info(
        "telegram bot starting",
        extra={"users": len(allowlist), "gateway": settings.gateway_url},
    )
    app.run_polling(allowed_updates=[Update.MESSAGE], drop_pending_updates=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
