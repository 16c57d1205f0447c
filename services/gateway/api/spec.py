"""The OpenAPI spec as clients read it: optional parameters are strings, never null.

FastAPI writes an optional ``str | None`` parameter as ``anyOf: [string, null]``. A
header or query parameter has no null: it is sent or left out. Read literally, the
spec allowed the text ``null`` for ``Last-Event-ID`` (which the server refuses with a
400), and a fuzzer sends exactly that. So each optional parameter's schema keeps its
non-null branch, merged with the keywords (pattern, lengths) written beside it.
"""

from __future__ import annotations

from typing import Any


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    branches = schema.get("anyOf")
    if not isinstance(branches, list):
        return schema
    rest = [b for b in branches if b != {"type": "null"}]
    if len(rest) != 1 or len(rest) == len(branches):
        return schema
    merged: dict[str, Any] = dict(rest[0])
    merged.update((k, v) for k, v in schema.items() if k != "anyOf")
    return merged


def tidy_parameters(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with every non-required parameter's null branch dropped (in place)."""
    for operations in spec.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if not parameter.get("required") and "schema" in parameter:
                    parameter["schema"] = _without_null(parameter["schema"])
    return spec
