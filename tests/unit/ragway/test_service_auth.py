"""The service token setting and the log masking of URL passwords (issue 16)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from ragway.logs import KeyValueFormatter, redact_url
from ragway.service_auth import ServiceTokenInterceptor, metadata
from ragway.settings import ServiceTokenSettings


def test_the_token_file_wins_over_the_variable_and_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("from-file\n")
    settings = ServiceTokenSettings(service_token="from-env", service_token_file=path)
    assert settings.service_token_value() == "from-file"
    assert ServiceTokenSettings(service_token="from-env").service_token_value() == "from-env"


def test_unset_or_empty_means_off() -> None:
    assert ServiceTokenSettings(service_token=None).service_token_value() is None
    assert ServiceTokenSettings(service_token="").service_token_value() is None
    assert metadata(None) == ()
    assert metadata("t") == (("authorization", "Bearer t"),)


def test_a_missing_or_empty_token_file_fails_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"RAGWAY_SERVICE_TOKEN_FILE .*absent"):
        ServiceTokenSettings(service_token_file=tmp_path / "absent").service_token_value()
    (tmp_path / "empty").write_text("  \n")
    with pytest.raises(ValueError, match="is empty"):
        ServiceTokenSettings(service_token_file=tmp_path / "empty").service_token_value()


def test_an_interceptor_refuses_an_empty_token() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        ServiceTokenInterceptor("")


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("redis://:s3cret@127.0.0.1:6390/0", "redis://:***@127.0.0.1:6390/0"),
        ("async+redis://user:p%40ss@redis:6379/1", "async+redis://user:***@redis:6379/1"),
        ("amqp://guest@host//", "amqp://guest@host//"),
        ("http://host:8000/readyz", "http://host:8000/readyz"),
    ],
)
def test_url_passwords_are_masked(text: str, masked: str) -> None:
    assert redact_url(text) == masked


def test_no_log_line_carries_a_url_password_in_message_or_fields() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(KeyValueFormatter("%(message)s"))
    log = logging.getLogger("test-redaction")
    log.addHandler(handler)
    try:
        log.error(
            "cannot connect to %s",
            "redis://:hunter2@10.0.0.1:6379/0",
            extra={"url": "redis://:hunter2@10.0.0.1:6379/1"},
        )
    finally:
        log.removeHandler(handler)
    line = out.getvalue()
    assert "hunter2" not in line
    assert line.count("redis://:***@10.0.0.1:6379") == 2


def test_the_redis_password_joins_the_url_from_a_file_or_the_variable(tmp_path: Path) -> None:
    from services.gateway.settings import GatewaySettings

    secret = tmp_path / "redis-password"
    secret.write_text("p@ss/word\n")
    from_file = GatewaySettings(redis_url="redis://redis:6379/0", redis_password_file=secret)
    assert from_file.redis_url == "redis://:p%40ss%2Fword@redis:6379/0"
    plain = GatewaySettings(redis_url="redis://:old@redis:6379/0", redis_password="new")
    assert plain.redis_url == "redis://:new@redis:6379/0"
    assert GatewaySettings(redis_url="redis://redis:6379/0").redis_url == "redis://redis:6379/0"
    assert "p@ss" not in repr(from_file.redis_password_file)
