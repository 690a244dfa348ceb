"""A local topology on 127.0.0.1: `make cluster`, or `python -m service.runtime.cluster`.

PostgreSQL (the embedded one, in DATA_DIR/pgdata), Debian's PgBouncer in transaction mode in
front of it, N instances of `python -m service serve` on ports of their own (and a METRICS_PORT
each, which nginx does not reach), and Debian's nginx balancing them. The instances share one
SECRET_KEY and OPS_TOKEN (DATA_DIR's, as `make serve` keeps them); their pools go through
PgBouncer, their LISTEN straight to PostgreSQL. They trust nginx (on 127.0.0.1) to name the
client in X-Forwarded-For, which it does.

nginx and PgBouncer run the files deploy/compose.yaml runs, deploy/nginx/nginx.conf and
deploy/pgbouncer/pgbouncer.ini: the two names nginx.conf leaves open are filled in here, and a
small PgBouncer file of our own %includes the shared one and then sets what differs on a laptop.
Everything is written to DATA_DIR/cluster/, every process logs to a file there, and everything
started is stopped by its pid, in the reverse order.
"""

import argparse
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from service.config import load_settings
from service.runtime.embedded_db import EmbeddedPostgres

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
NGINX_CONF = DEPLOY / "nginx" / "nginx.conf"
PGBOUNCER_INI = DEPLOY / "pgbouncer" / "pgbouncer.ini"
PGBOUNCER_USERS = DEPLOY / "pgbouncer" / "userlist.txt"
HOST = "127.0.0.1"
START_SECONDS = 60.0
# An instance's own SHUTDOWN_TIMEOUT_SECONDS (10) and a margin.
STOP_SECONDS = 20.0
_PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


class ClusterError(RuntimeError):
    """A part of the topology is missing or would not start; the message says which."""


def program(name: str) -> str:
    """The path of Debian's `name` (in /usr/sbin, often not on a user's PATH)."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin")
    if found is None:
        raise ClusterError(
            f"{name} is not installed: `make cluster` installs it when run as root,"
            f" or: sudo apt-get install {name}"
        )
    return found


def render(template: str, values: Mapping[str, str]) -> str:
    """`template` with each ${NAME} replaced, as envsubst would; other $ signs stay."""
    missing = set(_PLACEHOLDER.findall(template)) - set(values)
    if missing:
        raise ClusterError(f"no value for {', '.join(sorted(missing))}")
    return _PLACEHOLDER.sub(lambda found: values[found[1]], template)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _spawn(
    argv: list[str], log: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> "Process":
    # A session of its own: a terminal's Ctrl-C reaches us alone, and we stop each part in turn.
    with log.open("ab") as out:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    return Process(popen, log)


@dataclass
class Process:
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def send(self, signum: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signum)

    def wait(self) -> int:
        """Its exit status, once it exits (killed after STOP_SECONDS)."""
        try:
            return self.popen.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            return self.popen.wait()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.send(signum)
        return self.wait()

    def wait_until(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_SECONDS
        while not ready():
            if self.popen.poll() is not None:
                raise ClusterError(f"{what} exited with {self.popen.returncode}; see {self.log}")
            if time.monotonic() > deadline:
                raise ClusterError(f"{what} did not start in {START_SECONDS:.0f} s; see {self.log}")
            time.sleep(0.05)


def _listening(port: int) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            socket.create_connection((HOST, port), timeout=1).close()
        except OSError:
            return False
        return True

    return ready


def _answers(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, ConnectionError):
            return False

    return ready


@dataclass
class Instance:
    """One `python -m service serve`; `process` is None while it is stopped. nginx balances
    its `port`; its /metrics is on `metrics_port` alone, which nginx does not reach. `tree`,
    when set, is another release's source tree that it runs instead of this one: in a rolling
    upgrade both releases serve at once."""

    name: str
    port: int
    metrics_port: int
    log: Path
    process: Process | None = None
    tree: Path | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def metrics_url(self) -> str:
        return f"http://{HOST}:{self.metrics_port}/metrics"


@dataclass
class Cluster:
    run_dir: Path
    balancer_url: str
    database_url: str  # PostgreSQL itself
    bouncer_url: str
    instances: list[Instance]
    instance_env: dict[str, str] = field(repr=False)

    def spawn_instance(self, instance: Instance) -> None:
        env = {
            **self.instance_env,
            "PORT": str(instance.port),
            "METRICS_PORT": str(instance.metrics_port),
            "INSTANCE_ID": instance.name,
        }
        if instance.tree is not None:
            # `python -m` imports `service` from its working directory, ahead of this tree's
            # install; PYTHONSAFEPATH would drop that directory, PYTHONPATH keeps the tree first.
            env["PYTHONPATH"] = str(instance.tree)
        command = [sys.executable, "-m", "service", "serve"]
        instance.process = _spawn(command, instance.log, env, instance.tree)

    def wait_ready(self, instance: Instance) -> None:
        assert instance.process is not None
        instance.process.wait_until(_answers(instance.url + "/readyz"), instance.name)

    def start_instance(self, instance: Instance) -> None:
        """Start it (again) and wait until it answers /readyz."""
        self.spawn_instance(instance)
        self.wait_ready(instance)

    def stop_instance(self, instance: Instance) -> int:
        """SIGTERM by pid (in-flight requests finish); its exit status."""
        assert instance.process is not None
        status = instance.process.stop()
        instance.process = None
        return status

    def stop_instances(self) -> None:
        """Every running instance, all told at once and then waited for."""
        running = [i for i in self.instances if i.process is not None]
        for instance in running:
            assert instance.process is not None
            instance.process.send(signal.SIGTERM)
        for instance in running:
            self.stop_instance(instance)

    def exited(self) -> Instance | None:
        """An instance that stopped on its own, if any."""
        return next(
            (i for i in self.instances if i.process and i.process.popen.poll() is not None), None
        )


def _socket_dir(database_url: str) -> Path:
    """Where the unix socket of a PostgreSQL URL such as the embedded server's is."""
    return Path(parse_qs(urlsplit(database_url).query)["host"][0])


def _bouncer_ini(run_dir: Path, database_url: str, port: int) -> Path:
    """PgBouncer's file for here: the shared one, then what differs on a laptop.

    The shared file ends in its [pgbouncer] section, and these settings go on in it: PgBouncer
    resets that section to its defaults when a second [pgbouncer] header opens it again.
    """
    ini = run_dir / "pgbouncer.ini"
    ini.write_text(
        f"%include {PGBOUNCER_INI}\n"
        f"listen_addr = {HOST}\nlisten_port = {port}\nauth_file = {PGBOUNCER_USERS}\n\n"
        f"[databases]\n* = host={_socket_dir(database_url)}"
        f" port={urlsplit(database_url).port or 5432}\n"
    )
    ini.chmod(0o644)
    return ini


def _bouncer_login() -> tuple[str, str]:
    """The user and password of the userlist's first line."""
    user, password = shlex.split(PGBOUNCER_USERS.read_text().splitlines()[0])[:2]
    return user, password


def _start_bouncer(run_dir: Path, database_url: str) -> tuple[Process, str]:
    """PgBouncer and the URL of the database through it."""
    port = free_port()
    command = [program("pgbouncer"), str(_bouncer_ini(run_dir, database_url, port))]
    if os.geteuid() == 0:
        # PgBouncer refuses to run as root; the owner of PostgreSQL's socket directory is the
        # one user that may open the socket in it.
        owner = _socket_dir(database_url).stat().st_uid
        command[1:1] = ["-u", pwd.getpwuid(owner).pw_name]
    process = _spawn(command, run_dir / "pgbouncer.log")
    process.wait_until(_listening(port), "pgbouncer")
    user, password = _bouncer_login()
    database = urlsplit(database_url).path.lstrip("/")
    return process, f"postgresql://{user}:{password}@{HOST}:{port}/{database}"


def _start_nginx(run_dir: Path, port: int, instances: list[Instance]) -> Process:
    prefix = run_dir / "nginx"
    prefix.mkdir(exist_ok=True)
    conf = prefix / "nginx.conf"
    servers = " ".join(f"server {HOST}:{i.port};" for i in instances)
    conf.write_text(
        render(NGINX_CONF.read_text(), {"NGINX_LISTEN": f"{HOST}:{port}", "NGINX_SERVERS": servers})
    )
    process = _spawn(nginx_command(prefix, conf), run_dir / "nginx.log")
    process.wait_until(_answers(f"http://{HOST}:{port}/readyz"), "nginx")
    return process


def nginx_command(prefix: Path, conf: Path, *options: str) -> list[str]:
    """nginx on `conf`, in the foreground, with its pid file and temporary files in `prefix`."""
    return [
        program("nginx"),
        *options,
        "-p",
        str(prefix),
        "-c",
        str(conf),
        "-e",
        "stderr",
        "-g",
        f"daemon off; pid {prefix / 'nginx.pid'};",
    ]


@contextmanager
def running(
    data_dir: Path,
    instances: int = 2,
    port: int = 0,
    env: Mapping[str, str] | None = None,
    database_url: str | None = None,
    tree: Path | None = None,
) -> Iterator[Cluster]:
    """The whole topology until the block ends; `port` 0 picks a free one for the balancer.

    `env` adds settings for the instances (SWEEP_INTERVAL_SECONDS, RATE_LIMIT_*, ...).
    `database_url`, a PostgreSQL on a unix socket, is used instead of starting the embedded one.
    `tree`, another release's source tree, is what the instances run instead of this one.
    """
    if instances < 1:
        raise ClusterError(f"a cluster needs at least one instance, not {instances}")
    settings = load_settings({**os.environ, "DATA_DIR": str(data_dir)})
    run_dir = settings.data_dir / "cluster"
    run_dir.mkdir(parents=True, exist_ok=True)
    # nginx's workers and PgBouncer run as other users and read their files here.
    run_dir.chmod(0o755)
    with ExitStack() as stack:
        if database_url is None:
            database = EmbeddedPostgres(settings.pgdata)
            database_url = database.start()
            stack.callback(database.release)

        bouncer, bouncer_url = _start_bouncer(run_dir, database_url)
        stack.callback(bouncer.stop)

        names = [f"instance-{n}" for n in range(1, instances + 1)]
        port = port or free_port()
        cluster = Cluster(
            run_dir=run_dir,
            balancer_url=f"http://{HOST}:{port}",
            database_url=database_url,
            bouncer_url=bouncer_url,
            instances=[
                Instance(name, free_port(), free_port(), run_dir / f"{name}.log", tree=tree)
                for name in names
            ],
            instance_env={
                **{
                    k: v
                    for k, v in os.environ.items()
                    if k not in ("PORT", "METRICS_PORT", "INSTANCE_ID")
                },
                # nginx's address: the client's is in its X-Forwarded-For.
                "TRUSTED_PROXIES": HOST,
                **(env or {}),
                "HOST": HOST,
                "DATA_DIR": str(run_dir),
                "DATABASE_URL": bouncer_url,
                "LISTEN_DATABASE_URL": database_url,
                "DB_STATEMENT_CACHE_SIZE": "0",
                "SECRET_KEY": settings.secret_key,
                "OPS_TOKEN": settings.ops_token,
            },
        )
        stack.callback(cluster.stop_instances)
        # All start at once; then each must answer.
        for instance in cluster.instances:
            cluster.spawn_instance(instance)
        for instance in cluster.instances:
            cluster.wait_ready(instance)

        nginx = _start_nginx(run_dir, port, cluster.instances)
        # SIGQUIT: nginx's graceful stop.
        stack.callback(nginx.stop, signal.SIGQUIT)
        yield cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.runtime.cluster", description=__doc__)
    parser.add_argument(
        "--instances", type=int, default=int(os.environ.get("CLUSTER_INSTANCES") or 2)
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("CLUSTER_PORT") or 8080),
        help="the balancer's port (0: any free one)",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    data_dir = Path(os.environ.get("DATA_DIR") or "var")
    try:
        with running(data_dir, args.instances, args.port) as cluster:
            print(f"balancer   {cluster.balancer_url}")
            for instance in cluster.instances:
                print(f"{instance.name} {instance.url} (metrics: {instance.metrics_url})")
            print(f"pgbouncer  {cluster.bouncer_url}")
            print(f"logs in {cluster.run_dir}; Ctrl-C stops everything", flush=True)
            while not stop.wait(1.0):
                if (dead := cluster.exited()) is not None:
                    print(f"{dead.name} stopped on its own; see {dead.log}", file=sys.stderr)
                    return 1
    except ClusterError as exc:
        print(f"cannot start the cluster: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
