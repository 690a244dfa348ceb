"""Settings from the environment, with safe defaults (docs/operations.md#configuration)."""

import ipaddress
import os
import re
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from service.guessable import guessable


class ConfigError(ValueError):
    """A setting is present but unusable; the message names it."""


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from exc
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {value}")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = (env.get(name) or ("1" if default else "0")).lower()
    if raw not in ("0", "1", "true", "false"):
        raise ConfigError(f"{name} must be 0, 1, true or false, got {raw!r}")
    return raw in ("1", "true")


# Secret values shown in the repository's examples, now and before (deploy/compose.yaml, the
# Kubernetes Secret template, the docs): a deployment that copied one is refused at start.
# tests/test_config.py checks that every placeholder in those files is listed here.
PLACEHOLDER_SECRETS = frozenset(
    {
        "change-me-to-a-long-random-string",
        "change-me-too",
        "REPLACE-ME-with-a-long-random-string",
        "REPLACE-ME-with-another-random-string",
    }
)
MIN_SECRET_BYTES = 32
# A random secret of 32 characters or more uses far more distinct characters than this.
MIN_SECRET_DISTINCT = 10


def _given_secret(env: Mapping[str, str], name: str) -> str | None:
    """A secret set in the environment, refused when short, guessable from its shape, or copied
    from an example."""
    value = env.get(name)
    if not value:
        return None
    if len(value.encode()) < MIN_SECRET_BYTES:
        raise ConfigError(
            f"{name} must be at least {MIN_SECRET_BYTES} bytes, got {len(value.encode())}:"
            " use a random value, e.g. openssl rand -base64 48"
        )
    if value.strip().casefold() in {p.casefold() for p in PLACEHOLDER_SECRETS}:
        raise ConfigError(
            f"{name} is a placeholder from the repository's examples:"
            " set a random value, e.g. openssl rand -base64 48"
        )
    weak = guessable(value, MIN_SECRET_DISTINCT)
    if weak is not None:
        raise ConfigError(
            f"{name} can be guessed: {weak}; use a random value, e.g. openssl rand -base64 48"
        )
    return value


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(env: Mapping[str, str], name: str) -> tuple[IPNetwork, ...]:
    """A comma-separated list of addresses and CIDR blocks (an address is a block of one)."""
    networks = []
    for item in (env.get(name) or "").split(","):
        if item.strip():
            try:
                networks.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError as exc:
                raise ConfigError(
                    f"{name} must list addresses or CIDR blocks, got {item.strip()!r}"
                ) from exc
    return tuple(networks)


def _metrics_port(env: Mapping[str, str]) -> int | None:
    """METRICS_PORT, a port of its own (unset or 0: /metrics is served on PORT)."""
    port = _int(env, "METRICS_PORT", 0)
    if port and port == _int(env, "PORT", 8080):
        raise ConfigError(f"METRICS_PORT must differ from PORT, both are {port}")
    return port or None


# A season's name: a short word that reads well in a URL (2026-12, spring-2027).
SEASON_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$"


def _season(name: str) -> str:
    if re.fullmatch(SEASON_NAME, name) is None:
        raise ConfigError(f"SEASON must match {SEASON_NAME}, got {name!r}")
    return name


def _kept_secret(data_dir: Path, filename: str) -> str:
    """A random secret created once under the data directory and reused on later starts."""
    path = data_dir / filename
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(32)
    path.touch(mode=0o600)
    path.write_text(value)
    return value


def _default_instance_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    database_url: str | None = None
    # The LISTEN connection's URL when DATABASE_URL goes through a transaction pooler
    # (PgBouncer), which cannot hold a session's LISTEN; None: DATABASE_URL.
    listen_database_url: str | None = None
    # Prepared statements cached per connection; 0 behind PgBouncer before 1.21.
    db_statement_cache_size: int = 100
    # Whether a start applies the pending migrations; off where they are a step of their own
    # (`python -m service migrate`), and then a start waits for them this long.
    migrate_on_start: bool = True
    migration_wait_seconds: float = 300.0
    # How often a running instance reads the database's migration level.
    migration_check_seconds: float = 10.0
    data_dir: Path = Path("var")
    secret_key: str = ""
    ops_token: str = ""
    rate_limit_per_second: float = 50.0
    rate_limit_burst: int = 100
    db_pool_min: int = 2
    db_pool_max: int = 10
    db_timeout_seconds: float = 5.0
    max_body_bytes: int = 16 * 1024
    log_format: str = "auto"
    log_level: str = "info"
    shutdown_timeout_seconds: float = 10.0
    sweep_interval_seconds: float = 1.0
    match_wait_seconds: float = 24 * 3600.0
    # Attempts to bring a dead embedded database back before /healthz reports it lost.
    embedded_db_restarts: int = 10
    # Where the embedded database's supervisor writes its state; None with DATABASE_URL.
    embedded_db_state: Path | None = None
    snapshot_ttl_seconds: float = 7 * 24 * 3600.0
    ops_thin_pool: int = 20
    ops_high_bot_rate: float = 0.25
    # The matchmaking queue's alerts: a p95 time to match above this, a bot share above this.
    ops_slow_queue_seconds: float = 10.0
    ops_high_queue_bot_share: float = 0.5
    # The ops report's backup alerts: the newest base backup, or the newest archived WAL
    # segment, older than these (docs/operations.md#matchmaking-health).
    ops_backup_max_age_seconds: float = 26 * 3600.0
    ops_wal_max_age_seconds: float = 300.0
    log_requests: str = "all"
    workers: int = 1
    bench_floor: bool = False
    # Sent as X-Instance on every answer: which instance behind a load balancer answered.
    instance_id: str = field(default_factory=_default_instance_id)
    # What one player or one address may cost (docs/operations.md#limits).
    # -- runs and rating --
    # A run nobody touched for this long ends abandoned (docs/rules/cryptids.md#abandoned-runs);
    # the sweep that ends them runs this often on every instance.
    run_idle_seconds: float = 24 * 3600.0
    run_sweep_interval_seconds: float = 60.0
    # Runs one player may hold open at once (docs/rules/cryptids.md#open-runs).
    max_open_runs: int = 3
    # Whose ghost may move a player's rating (docs/rules/cryptids.md#rated-ghosts): an owner
    # account this old with this many runs ended, once a day per player at most.
    rated_ghost_min_age_seconds: int = 3 * 24 * 3600
    rated_ghost_min_runs: int = 3
    rated_ghost_repeat_seconds: int = 24 * 3600
    # The season the turn-based games' ratings count in, started at start-up if new
    # (docs/api.md#ratings-per-game-and-season); a later one the operator starts takes over.
    season: str = "2026-12"
    # -- sessions (docs/api.md#players-and-sessions) --
    access_token_ttl_seconds: int = 3600
    refresh_token_ttl_seconds: int = 90 * 24 * 3600
    # A refresh retried this soon with the token it used, its answer unseen, gets that answer.
    refresh_retry_seconds: float = 30.0
    # How often each process reads the sessions revoked by the others.
    revocation_sync_seconds: float = 5.0
    # Devices one player may link, and sessions it may hold open (a sign-in past it revokes
    # its oldest): the device list and what a sign-in counts stay small.
    max_devices: int = 10
    max_sessions: int = 20
    # -- addresses, sign-in and the ops door --
    # Proxies whose X-Forwarded-For names the client (docs/operations.md#limits).
    trusted_proxies: tuple[IPNetwork, ...] = ()
    # An IPv6 /48 gets this many times each per-address limit, shared by every /64 in it.
    ipv6_site_budgets: int = 16
    # Per client address, kept in PostgreSQL for every process: N at once, then N a period.
    registrations_per_address_per_hour: int = 10
    registrations_per_address_per_day: int = 50
    sign_ins_per_address_per_minute: int = 120
    auth_failures_per_address_per_minute: int = 10
    ws_handshakes_per_address_per_minute: int = 120
    ws_handshakes_per_player_per_minute: int = 20
    # How often each process adds what it let through to the shared per-player buckets.
    rate_limit_sync_seconds: float = 0.5
    # -- bodies and frames --
    # Frames a WebSocket may send in a row past the rate limit before it is closed.
    max_limited_frames: int = 10
    # Match sockets open at once in one process: per player, and per match for those not seated.
    max_sockets_per_player: int = 10
    max_sockets_per_match: int = 50
    # -- growth and retention --
    # How long /metrics serves the gauges it read from the database before reading them again.
    metrics_cache_seconds: float = 15.0
    # How long /metrics serves the text it rendered before rendering it again.
    metrics_render_seconds: float = 1.0
    # The port /metrics is served on instead of `port`; None: on `port`.
    metrics_port: int | None = None
    # Seats one player may hold in matches still waiting for players, and in matches not over.
    max_waiting_matches: int = 5
    max_open_matches: int = 20
    # How long a stored answer of a retried write is kept, and a match's events after its end.
    idempotency_key_ttl_seconds: float = 24 * 3600.0
    match_events_retention_seconds: float = 7 * 24 * 3600.0
    # Rows one statement of those sweeps may delete.
    sweep_batch_rows: int = 1000
    # -- matchmaking (docs/api.md#play-now-the-matchmaking-queue) --
    # Ratings (mu) matched together lie within this band of the longest-waiting ticket's, and
    # the band widens by the growth for every second that ticket has waited.
    matchmaking_band: float = 3.0
    matchmaking_band_growth_per_second: float = 0.5
    # A ticket still searching after this long is completed with bots.
    matchmaking_bot_after_seconds: float = 20.0
    # How often each instance runs the matcher over every queue.
    matchmaking_interval_seconds: float = 0.5
    # The turn timer of a match the queue makes: strangers seated together wait no longer.
    matchmaking_turn_seconds: int = 120
    # -- backups (docs/operations.md#backups-and-recovery) --
    # Where base backups and the WAL archive go; None: DATA_DIR/backups.
    backup_dir: Path | None = None
    # The embedded server archives every WAL segment, and finishes one at least this often
    # when anything was written (the recovery point objective); 0 waits for full segments.
    backup_archive: bool = True
    backup_archive_timeout_seconds: int = 60
    # Base backups kept by `python -m service backup`; older ones and their WAL are deleted.
    backup_keep: int = 7

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    @property
    def backups(self) -> Path:
        return self.backup_dir if self.backup_dir is not None else self.data_dir / "backups"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read the settings; secrets left unset are generated and kept under DATA_DIR."""
    env = os.environ if env is None else env
    data_dir = Path(env.get("DATA_DIR") or "var").resolve()
    log_format = env.get("LOG_FORMAT", "auto")
    if log_format not in ("auto", "json", "console"):
        raise ConfigError(f"LOG_FORMAT must be auto, json or console, got {log_format!r}")
    log_requests = env.get("LOG_REQUESTS") or "all"
    if log_requests not in ("all", "errors"):
        raise ConfigError(f"LOG_REQUESTS must be all or errors, got {log_requests!r}")
    return Settings(
        host=env.get("HOST") or "127.0.0.1",
        port=_int(env, "PORT", 8080),
        database_url=env.get("DATABASE_URL") or None,
        listen_database_url=env.get("LISTEN_DATABASE_URL") or None,
        db_statement_cache_size=_int(env, "DB_STATEMENT_CACHE_SIZE", 100, minimum=0),
        migrate_on_start=_flag(env, "MIGRATE_ON_START", default=True),
        migration_wait_seconds=_float(env, "MIGRATION_WAIT_SECONDS", 300.0),
        migration_check_seconds=_float(env, "MIGRATION_CHECK_SECONDS", 10.0),
        data_dir=data_dir,
        secret_key=_given_secret(env, "SECRET_KEY") or _kept_secret(data_dir, "secret_key"),
        ops_token=_given_secret(env, "OPS_TOKEN") or _kept_secret(data_dir, "ops_token"),
        rate_limit_per_second=_float(env, "RATE_LIMIT_PER_SECOND", 50.0),
        rate_limit_burst=_int(env, "RATE_LIMIT_BURST", 100, minimum=1),
        db_pool_min=_int(env, "DB_POOL_MIN", 2, minimum=1),
        db_pool_max=_int(env, "DB_POOL_MAX", 10, minimum=1),
        db_timeout_seconds=_float(env, "DB_TIMEOUT_SECONDS", 5.0),
        max_body_bytes=_int(env, "MAX_BODY_BYTES", 16 * 1024, minimum=1),
        log_format=log_format,
        log_level=(env.get("LOG_LEVEL") or "info").lower(),
        shutdown_timeout_seconds=_float(env, "SHUTDOWN_TIMEOUT_SECONDS", 10.0),
        sweep_interval_seconds=_float(env, "SWEEP_INTERVAL_SECONDS", 1.0),
        match_wait_seconds=_float(env, "MATCH_WAIT_SECONDS", 24 * 3600.0),
        embedded_db_restarts=_int(env, "EMBEDDED_DB_RESTARTS", 10, minimum=1),
        snapshot_ttl_seconds=_float(env, "SNAPSHOT_TTL_SECONDS", 7 * 24 * 3600.0),
        ops_thin_pool=_int(env, "OPS_THIN_POOL", 20),
        ops_high_bot_rate=_float(env, "OPS_HIGH_BOT_RATE", 0.25),
        ops_slow_queue_seconds=_float(env, "OPS_SLOW_QUEUE_SECONDS", 10.0),
        ops_high_queue_bot_share=_float(env, "OPS_HIGH_QUEUE_BOT_SHARE", 0.5),
        ops_backup_max_age_seconds=_float(env, "OPS_BACKUP_MAX_AGE_SECONDS", 26 * 3600.0),
        ops_wal_max_age_seconds=_float(env, "OPS_WAL_MAX_AGE_SECONDS", 300.0),
        log_requests=log_requests,
        workers=_int(env, "WORKERS", 1, minimum=1),
        bench_floor=_flag(env, "BENCH_FLOOR"),
        instance_id=env.get("INSTANCE_ID") or _default_instance_id(),
        # -- runs and rating --
        run_idle_seconds=_float(env, "RUN_IDLE_SECONDS", 24 * 3600.0),
        run_sweep_interval_seconds=_float(env, "RUN_SWEEP_INTERVAL_SECONDS", 60.0),
        max_open_runs=_int(env, "MAX_OPEN_RUNS", 3, minimum=1),
        rated_ghost_min_age_seconds=_int(env, "RATED_GHOST_MIN_AGE_SECONDS", 3 * 24 * 3600),
        rated_ghost_min_runs=_int(env, "RATED_GHOST_MIN_RUNS", 3),
        rated_ghost_repeat_seconds=_int(env, "RATED_GHOST_REPEAT_SECONDS", 24 * 3600),
        season=_season(env.get("SEASON") or "2026-12"),
        # -- sessions --
        access_token_ttl_seconds=_int(env, "ACCESS_TOKEN_TTL_SECONDS", 3600, minimum=1),
        refresh_token_ttl_seconds=_int(env, "REFRESH_TOKEN_TTL_SECONDS", 90 * 24 * 3600, minimum=1),
        refresh_retry_seconds=_float(env, "REFRESH_RETRY_SECONDS", 30.0),
        revocation_sync_seconds=_float(env, "REVOCATION_SYNC_SECONDS", 5.0),
        max_devices=_int(env, "MAX_DEVICES", 10, minimum=1),
        max_sessions=_int(env, "MAX_SESSIONS", 20, minimum=1),
        # -- addresses, sign-in and the ops door --
        trusted_proxies=_networks(env, "TRUSTED_PROXIES"),
        ipv6_site_budgets=_int(env, "IPV6_SITE_BUDGETS", 16, minimum=1),
        registrations_per_address_per_hour=_int(
            env, "REGISTRATIONS_PER_ADDRESS_PER_HOUR", 10, minimum=1
        ),
        registrations_per_address_per_day=_int(
            env, "REGISTRATIONS_PER_ADDRESS_PER_DAY", 50, minimum=1
        ),
        sign_ins_per_address_per_minute=_int(
            env, "SIGN_INS_PER_ADDRESS_PER_MINUTE", 120, minimum=1
        ),
        auth_failures_per_address_per_minute=_int(
            env, "AUTH_FAILURES_PER_ADDRESS_PER_MINUTE", 10, minimum=1
        ),
        ws_handshakes_per_address_per_minute=_int(
            env, "WS_HANDSHAKES_PER_ADDRESS_PER_MINUTE", 120, minimum=1
        ),
        ws_handshakes_per_player_per_minute=_int(
            env, "WS_HANDSHAKES_PER_PLAYER_PER_MINUTE", 20, minimum=1
        ),
        rate_limit_sync_seconds=_float(env, "RATE_LIMIT_SYNC_SECONDS", 0.5),
        # -- bodies and frames --
        max_limited_frames=_int(env, "MAX_LIMITED_FRAMES", 10, minimum=1),
        max_sockets_per_player=_int(env, "MAX_SOCKETS_PER_PLAYER", 10, minimum=1),
        max_sockets_per_match=_int(env, "MAX_SOCKETS_PER_MATCH", 50, minimum=1),
        # -- growth and retention --
        metrics_cache_seconds=_float(env, "METRICS_CACHE_SECONDS", 15.0),
        metrics_render_seconds=_float(env, "METRICS_RENDER_SECONDS", 1.0),
        metrics_port=_metrics_port(env),
        max_waiting_matches=_int(env, "MAX_WAITING_MATCHES", 5, minimum=1),
        max_open_matches=_int(env, "MAX_OPEN_MATCHES", 20, minimum=1),
        idempotency_key_ttl_seconds=_float(env, "IDEMPOTENCY_KEY_TTL_SECONDS", 24 * 3600.0),
        match_events_retention_seconds=_float(
            env, "MATCH_EVENTS_RETENTION_SECONDS", 7 * 24 * 3600.0
        ),
        sweep_batch_rows=_int(env, "SWEEP_BATCH_ROWS", 1000, minimum=1),
        # -- matchmaking --
        matchmaking_band=_float(env, "MATCHMAKING_BAND", 3.0),
        matchmaking_band_growth_per_second=_float(env, "MATCHMAKING_BAND_GROWTH_PER_SECOND", 0.5),
        matchmaking_bot_after_seconds=_float(env, "MATCHMAKING_BOT_AFTER_SECONDS", 20.0),
        matchmaking_interval_seconds=_float(env, "MATCHMAKING_INTERVAL_SECONDS", 0.5),
        matchmaking_turn_seconds=_int(env, "MATCHMAKING_TURN_SECONDS", 120, minimum=1),
        # -- backups --
        backup_dir=Path(env["BACKUP_DIR"]).resolve() if env.get("BACKUP_DIR") else None,
        backup_archive=_flag(env, "BACKUP_ARCHIVE", default=True),
        backup_archive_timeout_seconds=_int(env, "BACKUP_ARCHIVE_TIMEOUT_SECONDS", 60),
        backup_keep=_int(env, "BACKUP_KEEP", 7, minimum=1),
    )
