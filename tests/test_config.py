import os
import socket
from pathlib import Path

import pytest

from service.config import ConfigError, load_settings


def test_secrets_are_generated_once_and_kept(tmp_path: Path) -> None:
    first = load_settings({"DATA_DIR": str(tmp_path)})
    second = load_settings({"DATA_DIR": str(tmp_path)})
    assert len(first.secret_key) >= 32
    assert first.secret_key == second.secret_key
    assert first.ops_token == second.ops_token != first.secret_key
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_environment_overrides_defaults(tmp_path: Path) -> None:
    settings = load_settings(
        {"DATA_DIR": str(tmp_path), "HOST": "0.0.0.0", "PORT": "9000", "SECRET_KEY": "k" * 32}
    )
    assert (settings.host, settings.port, settings.secret_key) == ("0.0.0.0", 9000, "k" * 32)
    assert settings.database_url is None
    assert settings.pgdata == tmp_path / "pgdata"


@pytest.mark.parametrize(
    ("name", "value"), [("PORT", "http"), ("RATE_LIMIT_BURST", "0"), ("LOG_FORMAT", "xml")]
)
def test_unusable_setting_is_named(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_settings({"DATA_DIR": str(tmp_path), name: value})


def test_instance_id_is_given_or_the_host_and_process(tmp_path: Path) -> None:
    named = load_settings({"DATA_DIR": str(tmp_path), "INSTANCE_ID": "eu-1"})
    unnamed = load_settings({"DATA_DIR": str(tmp_path)})
    assert named.instance_id == "eu-1"
    assert unnamed.instance_id == f"{socket.gethostname()}-{os.getpid()}"
