"""deploy/compose.yaml refers to files that exist, and to the nginx and PgBouncer files that the
local topology (service.runtime.cluster) runs; the nginx file, rendered, passes `nginx -t`;
PostgreSQL archives its WAL into the volume the backup job backs up into, with an
archive_command that is run here on real files; the one-shot `migrate` service applies the
migrations before any instance starts, and the instances do not apply them themselves.

The compose file is read with PyYAML: `docker compose config` would need the compose plugin,
which a test machine rarely has.
"""

import configparser
import ipaddress
import json
import re
import secrets
import shlex
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from service.config import load_settings
from service.runtime import cluster

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def _mounts(service: dict[str, Any]) -> dict[str, Path]:
    """Container path -> the file of the repository mounted there."""
    mounts = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            mounts[target] = (DEPLOY / source).resolve()
    return mounts


def _volumes(service: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Named volume -> (container path, mode) where the service mounts it."""
    named = {}
    for volume in service.get("volumes", []):
        source, target, *mode = volume.split(":")
        if not source.startswith("."):
            named[source] = (target, mode[0] if mode else "rw")
    return named


def _postgres_settings(db: dict[str, Any]) -> dict[str, str]:
    """The `-c name=value` settings the db service starts PostgreSQL with."""
    command = db["command"]
    assert command[0] == "postgres"
    pairs = command[1:]
    assert pairs[::2] == ["-c"] * (len(pairs) // 2)
    return dict(setting.split("=", 1) for setting in pairs[1::2])


def _bouncer_ini() -> configparser.ConfigParser:
    ini = configparser.ConfigParser(comment_prefixes=(";",), interpolation=None)
    ini.read_string(cluster.PGBOUNCER_INI.read_text())
    return ini


def test_every_file_the_compose_file_refers_to_exists(compose: dict[str, Any]) -> None:
    built = set()
    for name, service in compose["services"].items():
        build = service.get("build")
        if build is not None and "dockerfile_inline" not in build:
            context = (DEPLOY / build["context"]).resolve()
            assert (context / build["dockerfile"]).is_file(), name
            built.add(name)
        for target, source in _mounts(service).items():
            assert source.is_file(), f"{name}: {source} (mounted at {target}) is missing"
        for volume in _volumes(service):
            assert volume in compose["volumes"], f"{name}: volume {volume} is not declared"
    # The service's image, and the backup and migrate jobs in the same image.
    assert built == {"app", "backup", "migrate"}
    assert compose["services"]["backup"]["build"] == compose["services"]["app"]["build"]
    assert compose["services"]["migrate"]["build"] == compose["services"]["app"]["build"]


def test_the_app_runs_three_instances_through_pgbouncer(compose: dict[str, Any]) -> None:
    services = compose["services"]
    app = services["app"]
    assert app["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    assert app["deploy"]["replicas"] == 3
    env = app["environment"]
    assert (env["HOST"], env["WORKERS"], env["DB_STATEMENT_CACHE_SIZE"]) == ("0.0.0.0", 1, 0)
    # The secrets are the operator's, required from the environment: no value to copy.
    for name in ("SECRET_KEY", "OPS_TOKEN"):
        assert env[name].startswith(f"${{{name}:?"), env[name]
    bouncer = _bouncer_ini()
    pooled, direct = urlsplit(env["DATABASE_URL"]), urlsplit(env["LISTEN_DATABASE_URL"])
    assert (pooled.hostname, pooled.port) == ("pgbouncer", int(bouncer["pgbouncer"]["listen_port"]))
    assert bouncer["pgbouncer"]["pool_mode"] == "transaction"
    # PgBouncer's [databases] line and the LISTEN connection both reach the db service.
    assert f"host={direct.hostname} port={direct.port}" in bouncer["databases"]["*"]
    assert direct.hostname in services
    user, password = cluster.PGBOUNCER_USERS.read_text().split()[:2]
    assert (f'"{pooled.username}"', f'"{pooled.password}"') == (user, password)
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == direct.password == pooled.password


def test_pgbouncer_runs_the_topologys_files(compose: dict[str, Any]) -> None:
    pgbouncer = compose["services"]["pgbouncer"]
    mounts = _mounts(pgbouncer)
    config = pgbouncer["command"][-1]
    assert mounts[config] == cluster.PGBOUNCER_INI
    assert mounts[_bouncer_ini()["pgbouncer"]["auth_file"]] == cluster.PGBOUNCER_USERS
    # `make cluster` goes on in this section after including the file (see its header).
    assert _bouncer_ini().sections()[-1] == "pgbouncer"


def test_nginx_runs_the_topologys_file_with_every_name_filled_in(compose: dict[str, Any]) -> None:
    nginx = compose["services"]["nginx"]
    env = nginx["environment"]
    (template,) = (t for t, source in _mounts(nginx).items() if source == cluster.NGINX_CONF)
    # The image renders /etc/nginx/templates/X.template into NGINX_ENVSUBST_OUTPUT_DIR/X.
    assert template == "/etc/nginx/templates/nginx.conf.template"
    assert env["NGINX_ENVSUBST_OUTPUT_DIR"] == "/etc/nginx"
    names = set(re.findall(r"\$\{(\w+)\}", cluster.NGINX_CONF.read_text()))
    assert names == {"NGINX_LISTEN", "NGINX_SERVERS"}
    for name in names:
        assert name in env and re.search(env["NGINX_ENVSUBST_FILTER"], name), name
    assert env["NGINX_SERVERS"] == "server app:8080;"


def test_the_instances_trust_nginx_alone_for_the_client_address(compose: dict[str, Any]) -> None:
    services = compose["services"]
    nginx = services["nginx"]["networks"]["default"]["ipv4_address"]
    (network,) = compose["networks"]["default"]["ipam"]["config"]
    assert services["app"]["environment"]["TRUSTED_PROXIES"] == nginx
    # Inside the network, outside the range Docker gives the other containers' addresses from.
    address = ipaddress.ip_address(nginx)
    assert address in ipaddress.ip_network(network["subnet"])
    assert address not in ipaddress.ip_network(network["ip_range"])
    # nginx appends the address it received each request from.
    forwarded = re.search(
        r"proxy_set_header X-Forwarded-For (\S+);", cluster.NGINX_CONF.read_text()
    )
    assert forwarded is not None and forwarded[1] == "$proxy_add_x_forwarded_for"


def test_metrics_are_on_a_port_nginx_does_not_forward(compose: dict[str, Any]) -> None:
    services = compose["services"]
    env = services["app"]["environment"]
    assert int(env["METRICS_PORT"]) != int(env["PORT"])
    # nginx balances the instances' PORT alone, and answers /metrics itself.
    assert services["nginx"]["environment"]["NGINX_SERVERS"] == f"server app:{env['PORT']};"
    location = re.search(
        r"location = /metrics \{\s*default_type application/json;\s*return 404 '([^']*)';\s*\}",
        cluster.NGINX_CONF.read_text(),
    )
    assert location is not None
    error = json.loads(location[1])["error"]
    assert (error["code"], error["message"], error["details"]) == (
        "not_found",
        "no such path: /metrics",
        {},
    )
    # Nothing else of the service is published: nginx's port is the way in.
    assert [name for name, service in services.items() if "ports" in service] == ["nginx"]


def test_the_rendered_nginx_file_passes_nginx_t(tmp_path: Path) -> None:
    rendered = cluster.render(
        cluster.NGINX_CONF.read_text(),
        {"NGINX_LISTEN": "127.0.0.1:8080", "NGINX_SERVERS": "server 127.0.0.1:8081;"},
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(rendered)
    checked = subprocess.run(
        cluster.nginx_command(tmp_path, conf, "-t"), capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr
    # nginx's own variables are left for nginx.
    assert "$http_upgrade" in rendered and "${" not in rendered


def test_a_name_left_without_a_value_is_refused() -> None:
    with pytest.raises(cluster.ClusterError, match="NGINX_SERVERS"):
        cluster.render(cluster.NGINX_CONF.read_text(), {"NGINX_LISTEN": "8080"})


def test_postgresql_archives_its_wal_into_the_volume_the_backup_job_fills(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    db, backup, app = services["db"], services["backup"], services["app"]
    settings = _postgres_settings(db)
    assert settings["archive_mode"] == "on"
    assert 0 < int(settings["archive_timeout"]) <= 300
    # One volume: PostgreSQL writes BACKUP_DIR/wal, the job BACKUP_DIR/base, the app reads both.
    (volume,) = compose["volumes"]
    backup_dir, _ = _volumes(db)[volume]
    assert _volumes(backup)[volume] == (backup_dir, "rw")
    assert _volumes(app)[volume] == (backup_dir, "ro")
    assert backup["environment"]["BACKUP_DIR"] == app["environment"]["BACKUP_DIR"] == backup_dir
    assert f"{backup_dir}/wal/%f" in settings["archive_command"]
    assert int(backup["environment"]["BACKUP_KEEP"]) >= 1
    # Only on demand (cron), with the service's own command, straight to PostgreSQL.
    assert backup["profiles"] == ["backup"] and "backup" not in app.get("profiles", [])
    assert backup["command"] == ["python", "-m", "service", "backup"]
    url = urlsplit(backup["environment"]["DATABASE_URL"])
    assert (url.hostname, url.port) == ("db", 5432)
    assert backup["depends_on"]["db"]["condition"] == "service_healthy"
    # The folders are made, and given to their writers, before PostgreSQL starts; `$$` is how
    # compose spells the `$` of the shell's "$@".
    prepare = db["entrypoint"][2]
    for folder in ("wal", "base"):
        assert f"{backup_dir}/{folder}" in prepare
    assert prepare.endswith('exec docker-entrypoint.sh "$$@"')


def test_the_backup_job_may_open_a_replication_connection(compose: dict[str, Any]) -> None:
    db = compose["services"]["db"]
    hba_path = _postgres_settings(db)["hba_file"]
    hba = _mounts(db)[hba_path].read_text()
    rules = [line.split() for line in hba.splitlines() if line.strip() and line[0] != "#"]
    user = urlsplit(compose["services"]["backup"]["environment"]["DATABASE_URL"]).username
    assert ["host", "replication", user, "all", "scram-sha-256"] in rules
    # The image's own rules stay: the app's connections, and its entrypoint's on the socket.
    assert ["host", "all", "all", "all", "scram-sha-256"] in rules
    assert ["local", "all", "all", "trust"] in rules


def test_the_archive_command_copies_whole_segments_and_never_replaces_one(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    command = _postgres_settings(compose["services"]["db"])["archive_command"]
    archive = tmp_path / "backups"
    (archive / "wal").mkdir(parents=True)
    backup_dir = _volumes(compose["services"]["db"])["backups"][0]
    segment = tmp_path / "pg_wal" / "000000010000000000000007"
    segment.parent.mkdir()
    segment.write_bytes(b"\x01" * 4096)

    def archive_it() -> int:
        # As PostgreSQL runs it: %p and %f replaced, then `sh -c`.
        line = command.replace(backup_dir, str(archive))
        line = line.replace("%p", shlex.quote(str(segment))).replace("%f", segment.name)
        return subprocess.run(["sh", "-c", line], check=False, timeout=10).returncode

    assert archive_it() == 0
    archived = archive / "wal" / segment.name
    assert archived.read_bytes() == segment.read_bytes()
    assert [p.name for p in archived.parent.iterdir()] == [segment.name]  # no .tmp left
    # Archived again after a crash, identical: accepted, so that archiving goes on.
    assert archive_it() == 0
    # A different segment of the same name: refused, and the archived one kept.
    segment.write_bytes(b"\x02" * 4096)
    assert archive_it() != 0
    assert archived.read_bytes() == b"\x01" * 4096


def test_the_migrations_run_once_straight_to_postgresql_before_the_instances(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    migrate, app = services["migrate"], services["app"]
    assert migrate["command"] == ["python", "-m", "service", "migrate"]
    # Started by `up` (no profile), once: no replicas, no restart, nothing published.
    assert "profiles" not in migrate and "ports" not in migrate
    assert migrate.get("restart", "no") == "no" and "deploy" not in migrate
    # Straight to PostgreSQL once it answers: the advisory lock and a migration outside a
    # transaction need one session throughout, which the transaction pooler does not keep.
    url = urlsplit(migrate["environment"]["DATABASE_URL"])
    assert (url.hostname, url.port) == ("db", 5432)
    assert url.hostname != urlsplit(app["environment"]["DATABASE_URL"]).hostname
    assert "LISTEN_DATABASE_URL" not in migrate["environment"]
    assert migrate["depends_on"] == {"db": {"condition": "service_healthy"}}
    # The instances start once it has exited 0, and never before: a failed migration leaves
    # them unstarted (or, on an upgrade, the running ones as they were).
    assert app["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert app["depends_on"]["pgbouncer"] == {"condition": "service_started"}


def test_the_instances_do_not_apply_migrations_themselves(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    env = compose["services"]["app"]["environment"]
    # A string: compose refuses a YAML boolean in an environment map.
    assert env["MIGRATE_ON_START"] == "false"
    given = {
        "DATA_DIR": str(tmp_path),
        "SECRET_KEY": secrets.token_urlsafe(48),
        "OPS_TOKEN": secrets.token_urlsafe(48),
        "MIGRATE_ON_START": env["MIGRATE_ON_START"],
    }
    assert load_settings(given).migrate_on_start is False
    assert load_settings({**given, "MIGRATE_ON_START": ""}).migrate_on_start is True


def test_the_compose_upgrade_migrates_before_it_recreates_the_instances(
    compose: dict[str, Any],
) -> None:
    """deploy/README.md's compose upgrade: the dry run, then the migrations on their own, then
    `up`, so that a failed migration is seen before any instance is replaced."""
    readme = (DEPLOY / "README.md").read_text()
    section = readme.split("\n## Upgrading\n", 1)[1].split("\n## ", 1)[0]
    with_compose = section.split("\n### With compose\n", 1)[1].split("\n### ", 1)[0]
    commands = [
        shlex.split(line, comments=True)
        for block in re.findall(r"```sh\n(.*?)```", with_compose, re.DOTALL)
        for line in block.replace("\\\n", " ").splitlines()
    ]
    compose_file = ["docker", "compose", "-f", "deploy/compose.yaml"]
    steps = [words[len(compose_file) :] for words in commands if words[:4] == compose_file]
    command = compose["services"]["migrate"]["command"]
    dry_run = steps.index(["run", "--rm", "migrate", *command, "--dry-run"])
    migrated = steps.index(["run", "--rm", "migrate"])
    recreated = steps.index(["up", "-d"])
    assert dry_run < migrated < recreated
