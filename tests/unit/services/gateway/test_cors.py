"""The preflight rule: an origin is admitted when some enabled key lists it."""

from __future__ import annotations

from services.gateway.auth import KeyEntry, KeyRegistry


def entry(i: int, origins: list[str], disabled: bool = False) -> KeyEntry:
    return KeyEntry(
        id=f"k{i}",
        sha256=f"{i:064x}",
        tenant="t",
        groups=["g"],
        allowed_origins=origins,
        disabled=disabled,
    )


def test_an_origin_is_admitted_when_an_enabled_key_lists_it() -> None:
    registry = KeyRegistry([entry(1, ["https://a.example"]), entry(2, ["*"], disabled=True)])
    assert registry.origin_admitted("https://a.example")
    assert not registry.origin_admitted("https://b.example")
    assert KeyRegistry([entry(3, ["*"])]).origin_admitted("https://b.example")
