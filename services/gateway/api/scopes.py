"""What each kind of API key may call under ``/v1/``, decided before routing.

A ``widget`` key is public (it sits in a web page), so it reaches only what a chat
widget needs: start a run or ask, read, stream and cancel its own runs, send
feedback on them, read its own conversations. Admin routes, and whatever is added
to the API later, stay closed to it until listed here. Ownership (the key's own
runs, from the origin that created them) is checked by the routes (runs/submit.py).
Admin-only routes check their own kind (api/deps.py).
"""

from __future__ import annotations

import re

_RUN = r"/v1/runs/[^/]+"
WIDGET_ROUTES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (method, re.compile(f"^{path}/?$"))
    for method, path in [
        ("POST", "/v1/runs"),
        ("POST", "/v1/ask"),
        ("GET", _RUN),
        ("GET", _RUN + "/events"),
        ("POST", _RUN + "/cancel"),
        ("POST", _RUN + "/feedback"),
        ("GET", "/v1/conversations/[^/]+"),
    ]
)


def refusal(kind: str, key_id: str, method: str, path: str) -> str | None:
    """Why this key may not make this call, or None when it may."""
    if kind != "widget":
        return None
    if any(method == m and pattern.match(path) for m, pattern in WIDGET_ROUTES):
        return None
    return (
        f"API key {key_id!r} is a widget key: it may only ask, stream, cancel and "
        f"send feedback on its own runs, not {method} {path}"
    )
