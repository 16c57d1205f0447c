"""``ragway feedback export``: a tenant's feedback on answers as JSON Lines, read
page by page from the gateway's admin API (``/v1/admin/feedback``, admin keys only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from ragway_tools.commands.canary import DEFAULT_KEY, DEFAULT_URL, Key, Url, _call, err

feedback_app = typer.Typer(
    help="Feedback (thumbs up/down, comments) that users sent on answers.",
    no_args_is_help=True,
)
PAGE = 500


@feedback_app.command("export")
def feedback_export(
    tenant: Annotated[str, typer.Option(help="The tenant whose feedback to export")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout")
    ] = None,
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """One JSON object a line per run with feedback, oldest first: run_id, rating, comment,
    at_ms, path, path_version, experiment, channel, origin, key_id, tenant."""
    out: TextIO = sys.stdout if output is None else output.open("w", encoding="utf-8")
    count = 0
    try:
        cursor: str | None = None
        while True:
            params: dict[str, object] = {"tenant": tenant, "limit": PAGE}
            if cursor is not None:
                params["after"] = cursor
            page = _call("GET", url, key, "/feedback", params=params)
            for item in page["items"]:
                out.write(json.dumps(item, sort_keys=True) + "\n")
                count += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
    finally:
        if output is not None:
            out.close()
    if output is not None:
        err.print(f"{count} feedback records of tenant {tenant!r} written to {output}")
