"""The Telegram channel: a bot that answers allow-listed users through the gateway's HTTP API.

A thin client: it never imports the gateway, it calls ``POST /v1/runs`` and follows
``GET /v1/runs/{id}/events`` with the API key the allow-list names for the user.
"""
