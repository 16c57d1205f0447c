"""The one error shape of ragway's HTTP APIs: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from starlette.responses import JSONResponse


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )
