"""Several worker processes serving one port (WORKERS=N), under one master process.

The master owns the embedded database (when there is one) and the workers: it forks them, each
binds the same port with SO_REUSEPORT so the kernel spreads connections across them, and it
forwards SIGTERM/SIGINT so they stop gracefully before the database does. If a worker dies on
its own, the master stops the others and exits non-zero: a supervisor restarts the whole
service rather than it running short-handed unnoticed.
"""

import asyncio
import gc
import multiprocessing
import os
import signal
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import cast

import structlog
from aiohttp import web

from service.config import Settings

log = structlog.get_logger("service.workers")

WORKER_PID_HEADER = "X-Worker-Pid"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
ORPHAN_CHECK_SECONDS = 1.0
KEEPALIVE_SECONDS = 75.0


async def _tag_worker(_: web.Request, response: web.StreamResponse) -> None:
    response.headers[WORKER_PID_HEADER] = str(os.getpid())


async def _freeze_heap(_: web.Application) -> None:
    # The start-up heap (modules, content, the OpenAPI document) lives as long as the process:
    # moved out of the collector's sight, full collections under load stop walking it.
    gc.freeze()


def _orphan_watch(master_pid: int) -> Callable[[web.Application], AsyncIterator[None]]:
    """Stop this worker if the master dies without telling it (SIGKILL, OOM killer)."""

    async def watch() -> None:
        while os.getppid() == master_pid:  # noqa: ASYNC110 - no event tells of a parent's death
            await asyncio.sleep(ORPHAN_CHECK_SECONDS)
        log.warning("master_gone", master_pid=master_pid)
        os.kill(os.getpid(), signal.SIGTERM)

    async def context(_: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(watch())
        yield
        task.cancel()

    return context


async def _serve(app: web.Application, settings: Settings, reuse_port: bool) -> None:
    """Serve `app` on PORT (and METRICS_PORT) until SIGINT/SIGTERM, then stop it gracefully."""
    # Imported late, as the application is (service/runtime/serve.py): it imports the metrics
    # module, which must first see the workers' shared metrics directory.
    from service.api.server import Runner

    runner = Runner(
        app,
        access_log=None,
        shutdown_timeout=settings.shutdown_timeout_seconds,
        # As web.run_app: an idle keep-alive connection is closed after 75 s.
        keepalive_timeout=KEEPALIVE_SECONDS,
    )
    await runner.setup()
    try:
        ports = [settings.port]
        if settings.metrics_port is not None:
            ports.append(settings.metrics_port)
        for port in ports:
            await web.TCPSite(runner, settings.host, port, reuse_port=reuse_port).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in _STOP_SIGNALS:
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def run_worker(
    settings: Settings,
    make_app: Callable[[Settings], web.Application],
    master_pid: int | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM; with a master, share its ports and watch it."""
    app = make_app(settings)
    app.on_startup.append(_freeze_heap)
    if master_pid is not None:
        app.on_response_prepare.append(_tag_worker)
        app.cleanup_ctx.append(_orphan_watch(master_pid))
    # Not web.run_app: it runs aiohttp's own AppRunner, whose refusals are not in the error
    # shape (service/api/server.py).
    asyncio.run(_serve(app, settings, reuse_port=master_pid is not None))


def _worker_main(
    settings: Settings, make_app: Callable[[Settings], web.Application], master_pid: int
) -> None:
    # A terminal's Ctrl-C reaches the whole process group; the master alone should get it
    # and forward it once, or a second SIGINT would cut a worker's graceful stop short.
    os.setpgrp()
    for signum in _STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    run_worker(settings, make_app, master_pid)


@contextmanager
def shared_metrics_dir() -> Iterator[None]:
    """PROMETHEUS_MULTIPROC_DIR for the workers, emptied of an earlier run's figures.

    prometheus_client picks its storage when first imported, so this must come before the
    application is: then every worker writes its figures there and a scrape of any sums them.
    """
    given = os.environ.get(MULTIPROC_ENV)
    with tempfile.TemporaryDirectory(prefix="metrics-") as made:
        folder = Path(given or made)
        for stale in folder.glob("*.db"):
            stale.unlink()
        os.environ[MULTIPROC_ENV] = str(folder)
        try:
            yield
        finally:
            if given is None:
                del os.environ[MULTIPROC_ENV]


def run_workers(settings: Settings, make_app: Callable[[Settings], web.Application]) -> int:
    """Run `settings.workers` workers until a stop signal; 0 when all stopped cleanly."""
    from prometheus_client import multiprocess

    context = multiprocessing.get_context("fork")
    workers: list[BaseProcess] = []
    stopping = False

    def stop_all(signum: int, _: FrameType | None = None) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers:
            if worker.pid is not None and worker.exitcode is None:
                os.kill(worker.pid, signum)

    previous = {signum: signal.signal(signum, stop_all) for signum in _STOP_SIGNALS}
    failed = False
    try:
        for _ in range(settings.workers):
            worker: BaseProcess = context.Process(
                target=_worker_main, args=(settings, make_app, os.getpid())
            )
            # Blocked across the fork: a stop signal must not run the master's handler in a
            # child that has not yet reset it; a pending one is delivered on unblocking.
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            try:
                worker.start()
                workers.append(worker)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
            log.info("worker_started", pid=worker.pid)
            if stopping:
                break
        running: dict[int, BaseProcess] = {worker.sentinel: worker for worker in workers}
        while running:
            for sentinel in wait(list(running)):
                worker = running.pop(cast(int, sentinel))
                worker.join()
                # Its live gauges (open sockets, pool connections) no longer count.
                multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
                if not stopping:
                    failed = True
                    log.error("worker_died", pid=worker.pid, exitcode=worker.exitcode)
                    stop_all(signal.SIGTERM)
                elif worker.exitcode != 0:
                    failed = True
                    log.error("worker_stopped_badly", pid=worker.pid, exitcode=worker.exitcode)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 1 if failed else 0
