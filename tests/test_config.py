import os
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from service.config import PLACEHOLDER_SECRETS, ConfigError, load_settings


def test_secrets_are_generated_once_and_kept(tmp_path: Path) -> None:
    first = load_settings({"DATA_DIR": str(tmp_path)})
    second = load_settings({"DATA_DIR": str(tmp_path)})
    assert len(first.secret_key) >= 32
    assert first.secret_key == second.secret_key
    assert first.ops_token == second.ops_token != first.secret_key
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_environment_overrides_defaults(tmp_path: Path) -> None:
    settings = load_settings(
        {"DATA_DIR": str(tmp_path), "HOST": "0.0.0.0", "PORT": "9000", "SECRET_KEY": GOOD_SECRET}
    )
    assert (settings.host, settings.port, settings.secret_key) == ("0.0.0.0", 9000, GOOD_SECRET)
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


GOOD_SECRET = "a-random-value-of-well-over-thirty-two-bytes"


@pytest.mark.parametrize("name", ["SECRET_KEY", "OPS_TOKEN"])
@pytest.mark.parametrize("value", ["k" * 31, *sorted(PLACEHOLDER_SECRETS)])
def test_a_short_or_placeholder_secret_is_refused_and_named(
    tmp_path: Path, name: str, value: str
) -> None:
    env = {"DATA_DIR": str(tmp_path), "SECRET_KEY": GOOD_SECRET, "OPS_TOKEN": GOOD_SECRET}
    with pytest.raises(ConfigError, match=name):
        load_settings({**env, name: value})
    random_value = secrets.token_urlsafe(24)
    accepted = load_settings({**env, name: random_value})
    assert random_value in (accepted.secret_key, accepted.ops_token)


@pytest.mark.parametrize("name", ["SECRET_KEY", "OPS_TOKEN"])
@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a" * 32, "1 distinct characters"),
        ("0" * 32, "1 distinct characters"),
        ("password" * 4, "7 distinct characters"),
        ("0123456789abcdef" * 2, "repeats a pattern of 16 characters"),
        ("correct-horse-battery-staple-" * 2, "repeats a pattern of 29 characters"),
    ],
)
def test_a_secret_long_enough_but_guessable_from_its_shape_is_refused(
    tmp_path: Path, name: str, value: str, why: str
) -> None:
    env = {"DATA_DIR": str(tmp_path), "SECRET_KEY": GOOD_SECRET, "OPS_TOKEN": GOOD_SECRET}
    with pytest.raises(ConfigError, match=f"{name} can be guessed: it (uses|repeats).*") as refused:
        load_settings({**env, name: value})
    assert why in str(refused.value)


def _example_secrets() -> set[str]:
    """Every value the repository's examples give SECRET_KEY or OPS_TOKEN, but those taken
    from the environment or from a command (`${…}`, `$(…)`)."""
    root = Path(__file__).resolve().parents[1]
    compose = yaml.safe_load((root / "deploy" / "compose.yaml").read_text())
    (template,) = [
        doc
        for doc in yaml.safe_load_all(
            (root / "deploy" / "k8s" / "secret.template.yaml").read_text()
        )
        if doc["metadata"]["name"] == "cryptid-backend"
    ]
    values = {str(compose["services"]["app"]["environment"][name]) for name in SECRETS} | set(
        template["stringData"].values()
    )
    documents = [root / "README.md", root / "deploy" / "README.md", *root.glob("docs/**/*.md")]
    for document in documents:
        for found in EXAMPLE_VALUE.finditer(document.read_text()):
            values.add(found["value"])
    return {value for value in values if not value.startswith("$")}


SECRETS = ("SECRET_KEY", "OPS_TOKEN")
# `SECRET_KEY=value`, `SECRET_KEY: value`, `--from-literal=SECRET_KEY=value`, quoted or not.
EXAMPLE_VALUE = re.compile(r"\b(?:SECRET_KEY|OPS_TOKEN)\s*[=:]\s*[\"']?(?P<value>[^\s\"'`|]+)")


def test_every_placeholder_secret_of_the_examples_is_listed_and_refused(tmp_path: Path) -> None:
    found = _example_secrets()
    assert "REPLACE-ME-with-a-long-random-string" in found
    assert found <= PLACEHOLDER_SECRETS
    for value in found:
        with pytest.raises(ConfigError, match="SECRET_KEY"):
            load_settings({"DATA_DIR": str(tmp_path), "SECRET_KEY": value})


def test_the_service_refuses_to_start_on_a_placeholder_secret(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATA_DIR": str(tmp_path),
        "SECRET_KEY": "change-me-to-a-long-random-string",
    }
    started = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 2
    assert "SECRET_KEY is a placeholder" in started.stderr
    # It stopped before it started anything: no database was made.
    assert not (tmp_path / "pgdata").exists()


@pytest.mark.parametrize(
    ("value", "networks"),
    [
        ("", ()),
        ("127.0.0.1", ("127.0.0.1/32",)),
        (" 10.0.0.0/8 , fd00::/8,192.168.1.7/24", ("10.0.0.0/8", "fd00::/8", "192.168.1.0/24")),
    ],
)
def test_trusted_proxies_are_addresses_and_blocks(
    tmp_path: Path, value: str, networks: tuple[str, ...]
) -> None:
    settings = load_settings({"DATA_DIR": str(tmp_path), "TRUSTED_PROXIES": value})
    assert tuple(str(network) for network in settings.trusted_proxies) == networks


def test_a_trusted_proxy_that_is_no_address_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"TRUSTED_PROXIES.*'nginx'"):
        load_settings({"DATA_DIR": str(tmp_path), "TRUSTED_PROXIES": "127.0.0.1,nginx"})
