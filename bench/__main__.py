"""The benchmark suite in one command: `python -m bench` prints one table (see the README).

Engine-only battles/s; the battle endpoint and the floor endpoint beside it at several
concurrencies in msgpack and JSON, with one worker and with two; the end-turn loop over HTTP
with a pre-filled pairing pool; each worker's peak memory. `--pairing` adds the pairing query
against a million snapshots (bench.pairing; about a minute more).
"""

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import engine, http, pairing
from bench.table import format_table
from service.runtime.embedded_db import EmbeddedPostgres
from service.store.database import apply_schema, create_pool

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


FULL = Sizes(3, 2.5, 0.5, 1000, (1, 16, 64), 64, 64, 20_000)
SMOKE = Sizes(1, 0.3, 0.1, 10, (1, 4), 4, 4, 200)


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
    errors = sum(sum(run["errors"].values()) for run in cell.runs)
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
    if errors:
        row["note"] = f"{errors} errors"
    row.update(extra)
    return row


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


def _cells(sizes: Sizes, workers: int) -> list[Cell]:
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
    return cells


async def _prefill(pgdata: Path, snapshots: int) -> None:
    """The service's own embedded database, started here once to COPY a pairing pool in."""
    database = EmbeddedPostgres(pgdata)
    try:
        pool = await create_pool(database.start(), 1, 2, 30.0)
        try:
            await apply_schema(pool)
            await pairing.fill(pool, snapshots, owners=max(10, snapshots // 20))
        finally:
            await pool.close()
    finally:
        database.release()


def _serve_and_measure(
    data_dir: Path, sizes: Sizes, workers: int
) -> tuple[list[Cell], Cell | None, list[float]]:
    """Every simulate/floor cell, the end-turn loop (one worker only), and peak RSS per worker.

    Repeats go round the cells rather than cell after cell, so a burst of noise on the machine
    spreads over all the figures instead of skewing one.
    """
    cells = _cells(sizes, workers)
    turns = None
    if workers == 1:
        spec = {
            "mode": "end-turn",
            "concurrency": sizes.players,
            "seconds": sizes.seconds * 2,
            "warmup": sizes.warmup,
        }
        turns = Cell("end-turn (HTTP)", workers, spec, [])
    with http.running_service(data_dir, workers) as service:
        for _ in range(sizes.repeats):
            for cell in cells:
                cell.runs.append(http.measure(service, cell.spec))
            if turns is not None:
                turns.runs.append(http.measure(service, turns.spec))
        return cells, turns, service.peak_rss_mb()


def run(sizes: Sizes, with_pairing: bool = False) -> list[dict[str, str]]:
    engine_rows = engine.run(smoke=sizes is SMOKE)
    engine_rate = {row["mode"]: float(str(row["median/s"])) for row in engine_rows}
    rows = [
        _blank(
            f"engine, {row['mode']}",
            **{
                "median/s": str(row["median/s"]),
                "spread/s": f"{row['min/s']}-{row['max/s']}",
                "note": f"one core, {row['battles']} battles x {row['repeats']}",
            },
        )
        for row in engine_rows
    ]
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        data_dir = Path(folder)
        asyncio.run(_prefill(data_dir / "pgdata", sizes.pool))
        one_worker: dict[str, float] = {}
        for workers in (1, 2):
            cells, turns, peaks = _serve_and_measure(data_dir, sizes, workers)
            floors = {
                (c.label.split()[1], c.spec["concurrency"]): c.median("rate")
                for c in cells
                if c.label.startswith("floor")
            }
            for cell in cells:
                fmt, concurrency = cell.label.split()[1], cell.spec["concurrency"]
                extra = {}
                if cell.label.startswith("simulate"):
                    rate = cell.median("rate")
                    extra["vs engine"] = f"{rate / engine_rate['with replay']:.2f}"
                    extra["vs floor"] = f"{rate / floors[fmt, concurrency]:.2f}"
                if concurrency == sizes.scaled_clients:
                    key = cell.label
                    if workers == 1:
                        one_worker[key] = cell.median("rate")
                    else:
                        extra["note"] = f"{cell.median('rate') / one_worker[key]:.2f}x 1 worker"
                rows.append(_row(cell, **extra))
            if turns is not None:
                rows.append(_row(turns, note=f"pool of {sizes.pool:,} snapshots"))
            rows.extend(
                _blank(
                    "peak RSS",
                    workers=str(workers),
                    note=f"worker {i + 1}: {peak:.0f} MiB",
                )
                for i, peak in enumerate(peaks)
            )
    if with_pairing:
        rows.extend(
            _blank(str(row["figure"]), **{"median/s": str(row["value"]), **_latency(row)})
            for row in pairing.run()
        )
    return rows


def _latency(row: dict[str, Any]) -> dict[str, str]:
    return {"p50 ms": str(row["p50 ms"]), "p99 ms": str(row["p99 ms"])}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    parser.add_argument(
        "--pairing", action="store_true", help="add the pairing query on a million snapshots"
    )
    args = parser.parse_args(argv)
    print(format_table(run(SMOKE if args.smoke else FULL, args.pairing)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
