"""The benchmark suite in one command: `python -m bench` prints one table (docs/performance.md).

Engine-only battles/s, of the compiled build and of the pure one with their ratio; the battle
endpoint and the floor endpoint beside it at several concurrencies in msgpack and JSON, with one
worker and with two; the end-turn loop over HTTP with a pre-filled pairing pool; match actions
over HTTP and on the WebSocket at several numbers of concurrent matches; "play now" tickets
matched per second and their time to match at `players` concurrent players; each worker's peak
memory; the leaderboards' reads among a million players rated in the autobattler and in one
game, a few thousand deleted, each against a read of one player by id (bench.leaderboard);
then the issue targets, each checked against this run. The one-worker
and two-worker services run side by side on one database, each two-worker figure measured right
after its one-worker twin. `--pairing` adds the pairing query against a million
snapshots (bench.pairing) and the end-turn loop against a million-snapshot pool (a few minutes
more). `--cluster` measures instead the battle endpoint, end-turn and match actions through
nginx with 1, 2 and 3 instances (bench.cluster).
"""

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import cluster, engine, http, leaderboard, pairing, targets
from bench.table import format_table
from service.games.cryptids import ENGINE_BUILD
from service.runtime.embedded_db import EmbeddedPostgres
from service.store.database import create_pool
from service.store.migrate import migrate_on

SIMULATE = "/v1/battles/simulate"
FLOOR = "/v1/bench/floor"
FORMATS = ("msgpack", "json")


@dataclass(frozen=True)
class Sizes:
    repeats: int
    seconds: float
    warmup: float
    corpus: int
    clients: tuple[int, ...]  # concurrencies with one worker
    scaled_clients: int  # the concurrency compared across worker counts
    players: int  # end-turn players
    pool: int  # snapshots in the pairing pool before the end-turn loop
    matches: tuple[int, ...]  # concurrent matches of the match-action rows
    big_pool: int  # the end-turn loop's pool under --pairing


FULL = Sizes(3, 2.5, 0.5, 1000, (1, 16, 64), 64, 64, 20_000, (1, 16, 64), 1_000_000)
SMOKE = Sizes(1, 0.3, 0.1, 10, (1, 4), 4, 4, 200, (1, 4), 400)


@dataclass
class Cell:
    """One figure measured `repeats` times: rates, latencies and CPU of each run."""

    label: str
    workers: int
    spec: dict[str, Any]
    runs: list[dict[str, Any]]

    def median(self, key: str) -> float:
        return float(statistics.median(run[key] for run in self.runs))

    def spread(self) -> str:
        rates = [run["rate"] for run in self.runs]
        return f"{min(rates):.0f}-{max(rates):.0f}"


def _row(cell: Cell, **extra: str) -> dict[str, str]:
    errors = _errors(cell)
    row = {
        "figure": cell.label,
        "workers": str(cell.workers),
        "clients": str(cell.spec["concurrency"]),
        "median/s": f"{cell.median('rate'):.0f}",
        "spread/s": cell.spread(),
        "p50 ms": f"{cell.median('p50_ms'):.2f}",
        "p99 ms": f"{cell.median('p99_ms'):.2f}",
        "vs engine": "",
        "vs floor": "",
        "server us/req": f"{cell.median('server_us'):.0f}",
        "load cpu": f"{cell.median('cpu'):.2f}",
        "note": "",
    }
    row.update(extra)
    if errors:
        row["note"] = "; ".join(filter(None, (row["note"], f"{errors} errors")))
    return row


def _engine_in_server(cell: Cell) -> float | None:
    """The median of the engine's time per battle inside the server, over the runs that fought."""
    times = [run["engine_us"] for run in cell.runs if run.get("engine_us") is not None]
    return float(statistics.median(times)) if times else None


def _errors(cell: Cell) -> int:
    """Failed requests; the refused buys of clients that buy whatever it costs are expected."""
    refused = "422" if cell.spec.get("buys") == "three" else None
    return sum(n for run in cell.runs for what, n in run["errors"].items() if what != refused)


def _blank(figure: str, **values: str) -> dict[str, str]:
    row = dict.fromkeys(_row_keys(), "")
    row["figure"] = figure
    row.update(values)
    return row


def _row_keys() -> list[str]:
    return [
        "figure",
        "workers",
        "clients",
        "median/s",
        "spread/s",
        "p50 ms",
        "p99 ms",
        "vs engine",
        "vs floor",
        "server us/req",
        "load cpu",
        "note",
    ]


def _cells(sizes: Sizes, workers: int, data_dir: Path) -> list[Cell]:
    clients = sizes.clients if workers == 1 else (sizes.scaled_clients,)
    cells = []
    for fmt in FORMATS:
        for concurrency in clients:
            for label, path in (("simulate", SIMULATE), ("floor", FLOOR)):
                spec = {
                    "mode": "simulate",
                    "path": path,
                    "format": fmt,
                    "concurrency": concurrency,
                    "seconds": sizes.seconds,
                    "warmup": sizes.warmup,
                    "corpus": sizes.corpus,
                }
                cells.append(Cell(f"{label} {fmt}", workers, spec, []))
            if workers == 1 and concurrency == sizes.scaled_clients:
                # The same battles with a token from before sessions (no `sid`), signed with
                # the service's key: what a session's access token costs against it.
                spec = {**cells[-2].spec, "sessionless_key_file": str(data_dir / "secret_key")}
                cells.append(Cell(f"simulate-sessionless {fmt}", workers, spec, []))
    return cells


async def _prefill(pgdata: Path, snapshots: int) -> None:
    """The service's own embedded database, started here once to COPY a pairing pool in."""
    database = EmbeddedPostgres(pgdata)
    try:
        pool = await create_pool(database.start(), 1, 2, 30.0)
        try:
            async with pool.acquire() as conn:
                await migrate_on(conn)
            await pairing.fill(pool, snapshots, owners=max(10, snapshots // 20))
        finally:
            await pool.close()
    finally:
        database.release()


def _turn_cells(sizes: Sizes, pool: int, workers: int = 1) -> list[Cell]:
    """The end-turn loop as the old clients play it (three buys a round, whatever they cost),
    as clients that buy only what fits, and as clients that send those buys with the end-turn."""
    return [
        Cell(
            label,
            workers,
            {
                "mode": "end-turn",
                "buys": buys,
                "concurrency": sizes.players,
                "seconds": sizes.seconds * 2,
                "warmup": sizes.warmup,
                "pool": pool,
            },
            [],
        )
        for label, buys in (
            ("end-turn (HTTP)", "three"),
            ("end-turn, fitting buys", "fitting"),
            ("end-turn, one request", "in-turn"),
        )
    ]


def _match_cells(sizes: Sizes, workers: int = 1) -> list[Cell]:
    """Match actions as POST requests and on the match's WebSocket, at each number of matches
    (with two workers, only the most)."""
    matches = sizes.matches if workers == 1 else sizes.matches[-1:]
    return [
        Cell(
            f"match actions ({label})",
            workers,
            {
                "mode": "match",
                "via": via,
                "concurrency": m,
                "seconds": sizes.seconds,
                "warmup": sizes.warmup,
            },
            [],
        )
        for label, via in (("HTTP", "http"), ("socket", "socket"))
        for m in matches
    ]


def _queue_cell(sizes: Sizes) -> Cell:
    """Players pressing "play now" together, matched with each other (one worker)."""
    spec = {
        "mode": "queue",
        "concurrency": sizes.players,
        "seconds": sizes.seconds * 2,
        "warmup": sizes.warmup,
    }
    return Cell("play now (tickets matched)", 1, spec, [])


@dataclass
class Measured:
    cells: list[Cell]  # simulate and floor
    loops: list[Cell]  # end-turn and match actions
    peaks: list[float]


def _worker_cells(sizes: Sizes, workers: int, data_dir: Path) -> tuple[list[Cell], list[Cell]]:
    """The simulate/floor cells and the loops measured on the service with `workers`."""
    turns = _turn_cells(sizes, sizes.pool, workers)
    if workers > 1:
        # With two workers, the end-turn client of the fewest requests.
        turns = [cell for cell in turns if cell.spec["buys"] == "in-turn"]
    queue = [_queue_cell(sizes)] if workers == 1 else []
    return _cells(sizes, workers, data_dir), [*turns, *_match_cells(sizes, workers), *queue]


def _round_order(one: list[Cell], two: list[Cell]) -> list[tuple[int, Cell]]:
    """One round of measurements: each two-worker cell right after its one-worker twin, so that
    the machine's drift between them is as small as it can be."""
    twins = {(cell.label, cell.spec["concurrency"]): cell for cell in two}
    order = []
    for cell in one:
        order.append((1, cell))
        twin = twins.pop((cell.label, cell.spec["concurrency"]), None)
        if twin is not None:
            order.append((2, twin))
    return order + [(2, cell) for cell in twins.values()]


def _serve_and_measure(data_dir: Path, sizes: Sizes) -> dict[int, Measured]:
    """Every cell on a one-worker and a two-worker service side by side, on one database; then
    each worker's peak RSS.

    Repeats go round all the cells rather than cell after cell, so a burst of noise on the
    machine spreads over all the figures instead of skewing one; the idle service meanwhile
    only runs its timers and hears the other's match notifications.
    """
    measured = {w: Measured(*_worker_cells(sizes, w, data_dir), []) for w in (1, 2)}
    order = _round_order(
        [*measured[1].cells, *measured[1].loops], [*measured[2].cells, *measured[2].loops]
    )
    database = EmbeddedPostgres(data_dir / "pgdata")
    try:
        url = database.start()
        with (
            http.running_service(data_dir, 1, url) as one,
            http.running_service(data_dir, 2, url) as two,
        ):
            services = {1: one, 2: two}
            for _ in range(sizes.repeats):
                for workers, cell in order:
                    cell.runs.append(http.measure(services[workers], cell.spec))
            for workers, service in services.items():
                measured[workers].peaks = service.peak_rss_mb()
    finally:
        database.release()
    return measured


def _loop_row(cell: Cell) -> dict[str, str]:
    if cell.spec["mode"] == "end-turn":
        note = f"pool of {cell.spec['pool']:,} snapshots"
        if cell.spec["buys"] == "three":
            refused = sum(run["errors"].get("422", 0) for run in cell.runs)
            note += f", {refused:,} buys refused (422)"
        return _row(cell, note=note)
    if cell.spec["mode"] == "queue":
        p95 = cell.median("p95_ms")
        note = f"necromancers, 2 seats: time to match p50/p99 ms beside, p95 {p95:.0f} ms"
        return _row(cell, note=note)
    moves = sum(run["moves"] for run in cell.runs) / max(1, sum(r["requests"] for r in cell.runs))
    # The rate counts the client's actions; each also applies the bot seat's replies.
    return _row(cell, note=f"necromancers vs a bot seat, {moves:.1f} moves per action")


def _big_pool_turns(sizes: Sizes) -> list[Cell]:
    """The end-turn loop again, three buys a round and a turn in one request, against a pool of
    `sizes.big_pool` snapshots."""
    with tempfile.TemporaryDirectory(prefix="bench-big-") as folder:
        data_dir = Path(folder)
        asyncio.run(_prefill(data_dir / "pgdata", sizes.big_pool))
        cells = [c for c in _turn_cells(sizes, sizes.big_pool) if c.spec["buys"] != "fitting"]
        with http.running_service(data_dir, 1) as service:
            for _ in range(sizes.repeats):
                for cell in cells:
                    cell.runs.append(http.measure(service, cell.spec))
        return cells


def run(
    sizes: Sizes, with_pairing: bool = False
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The benchmark table's rows, and the targets checked against them."""
    engine_rows = engine.run(smoke=sizes is SMOKE)
    # The server runs the installed build: the endpoint's ratios are to that one's rate.
    engine_rate = {
        row["mode"]: float(str(row["median/s"]))
        for row in engine_rows
        if row["build"] == ENGINE_BUILD
    }
    rows = [
        _blank(
            f"engine {row['build']}, {row['mode']}",
            **{
                "median/s": str(row["median/s"]),
                "spread/s": f"{row['min/s']}-{row['max/s']}",
                "note": f"one core, {row['battles']} battles x {row['repeats']}"
                + ("" if row["build"] == "pure" else f", {row['vs pure']} pure"),
            },
        )
        for row in engine_rows
    ]
    figures = targets.Figures(
        engine_with_replay=engine_rate["with replay"],
        engine_builds={
            str(row["build"]): float(str(row["median/s"]))
            for row in engine_rows
            if row["mode"] == "with replay"
        },
    )
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        data_dir = Path(folder)
        asyncio.run(_prefill(data_dir / "pgdata", sizes.pool))
        one_worker: dict[str, float] = {}
        by_workers = _serve_and_measure(data_dir, sizes)
        for workers in (1, 2):
            measured = by_workers[workers]
            floors = {
                (c.label.split()[1], c.spec["concurrency"]): c
                for c in measured.cells
                if c.label.startswith("floor")
            }
            for cell in measured.cells:
                fmt, concurrency = cell.label.split()[1], cell.spec["concurrency"]
                extra = {}
                if cell.label.startswith("simulate"):
                    rate = cell.median("rate")
                    floor = floors[fmt, concurrency]
                    extra["vs engine"] = f"{rate / engine_rate['with replay']:.2f}"
                    extra["vs floor"] = f"{rate / floor.median('rate'):.2f}"
                    engine_us = _engine_in_server(cell)
                    if engine_us is not None:
                        extra["note"] = f"engine {engine_us:.0f} us in the server"
                    if cell.label.startswith("simulate-sessionless"):
                        mine = next(
                            c
                            for c in measured.cells
                            if c.label == f"simulate {fmt}" and c.spec["concurrency"] == concurrency
                        )
                        cost = mine.median("server_us") / cell.median("server_us")
                        note = f"a session's access token costs {cost:.2f}x this"
                        extra["note"] = "; ".join(filter(None, (extra.get("note"), note)))
                    elif workers == 1 and concurrency == sizes.scaled_clients:
                        figures.request_us[fmt] = cell.median("server_us")
                        figures.floor_us[fmt] = floor.median("server_us")
                        if engine_us is not None:
                            figures.engine_in_server_us[fmt] = engine_us
                if concurrency == sizes.scaled_clients and "sessionless" not in cell.label:
                    key = cell.label
                    if workers == 1:
                        one_worker[key] = cell.median("rate")
                    else:
                        scale = cell.median("rate") / one_worker[key]
                        ratio = f"{scale:.2f}x 1 worker"
                        extra["note"] = "; ".join(filter(None, (extra.get("note"), ratio)))
                        if key.startswith("simulate"):
                            figures.worker_scaling[fmt] = scale
                rows.append(_row(cell, **extra))
            for cell in measured.loops:
                rows.append(_loop_row(cell))
                figures.loop(cell)
            rows.extend(
                _blank(
                    "peak RSS",
                    workers=str(workers),
                    note=f"worker {i + 1}: {peak:.0f} MiB",
                )
                for i, peak in enumerate(measured.peaks)
            )
    rows.extend(
        _blank(
            str(row["figure"]),
            **{"median/s": str(row["value"]), **_latency(row)},
            note=f"{row['vs by id']} a player read by id" if row["vs by id"] else "",
        )
        for row in leaderboard.run(smoke=sizes is SMOKE)
    )
    if with_pairing:
        rows.extend(
            _blank(str(row["figure"]), **{"median/s": str(row["value"]), **_latency(row)})
            for row in pairing.run(smoke=sizes is SMOKE)
        )
        for big in _big_pool_turns(sizes):
            rows.append(_loop_row(big))
            figures.loop(big)
    checked = [
        {"target": line.target, "measured": line.measured, "": line.verdict}
        for line in targets.check(figures, sizes.players, sizes.matches[-1])
    ]
    return rows, checked


def _latency(row: dict[str, Any]) -> dict[str, str]:
    return {"p50 ms": str(row["p50 ms"]), "p99 ms": str(row["p99 ms"])}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    parser.add_argument(
        "--pairing", action="store_true", help="add the pairing query on a million snapshots"
    )
    parser.add_argument(
        "--cluster", action="store_true", help="instead: 1, 2 and 3 instances behind nginx"
    )
    args = parser.parse_args(argv)
    if args.cluster:
        print(format_table(cluster.run(cluster.SMOKE if args.smoke else cluster.FULL)))
        return 0
    rows, checked = run(SMOKE if args.smoke else FULL, args.pairing)
    print(format_table(rows))
    print()
    print(format_table(checked))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
