"""The throughput targets, each checked against figures of the same benchmark run.

Every line names the target, the figure this run measured, and whether it is met.
"""

from dataclasses import dataclass, field
from typing import Any, Protocol


class Measured(Protocol):
    label: str
    workers: int
    spec: dict[str, Any]

    def median(self, key: str) -> float: ...


@dataclass(frozen=True)
class Line:
    target: str
    measured: str
    verdict: str


@dataclass
class Figures:
    engine_with_replay: float  # battles/s on one core, of the build the server runs
    engine_builds: dict[str, float] = field(default_factory=dict)  # with replay, by build
    request_us: dict[str, float] = field(default_factory=dict)  # simulate, by format
    floor_us: dict[str, float] = field(default_factory=dict)  # the floor, by format
    # The engine's own time per battle inside the serving process, by format.
    engine_in_server_us: dict[str, float] = field(default_factory=dict)
    worker_scaling: dict[str, float] = field(default_factory=dict)  # 2 workers / 1, by format
    # (pool, buys, workers) -> (turns/s, p99 ms)
    turns: dict[tuple[int, str, int], tuple[float, float]] = field(default_factory=dict)
    # (concurrent matches, via, workers) -> (actions/s, p99 ms)
    actions: dict[tuple[int, str, int], tuple[float, float]] = field(default_factory=dict)

    def loop(self, cell: Measured) -> None:
        figure = (cell.median("rate"), cell.median("p99_ms"))
        if cell.spec["mode"] == "end-turn":
            self.turns[cell.spec["pool"], cell.spec["buys"], cell.workers] = figure
        elif cell.spec["mode"] == "match":
            self.actions[cell.spec["concurrency"], cell.spec["via"], cell.workers] = figure


def _verdict(met: bool) -> str:
    return "met" if met else "missed"


def _in_server(engine_us: float | None) -> str:
    """The engine's time inside the server, beside the warm loop's that the budget counts."""
    return "" if engine_us is None else f"; its engine {engine_us:.0f} us in the server"


def _rate_line(
    what: str, least: float, p99_at_most: float | None, got: tuple[float, float]
) -> Line:
    rate, p99 = got
    target = f"{what} >= {least:,.0f}/s" + (f", p99 <= {p99_at_most:.0f} ms" if p99_at_most else "")
    met = rate >= least and (p99_at_most is None or p99 <= p99_at_most)
    return Line(target, f"{rate:,.0f}/s, p99 {p99:.1f} ms", _verdict(met))


# How each end-turn client shops (bench.load).
BUYS = {"three": "three buys", "fitting": "fitting buys", "in-turn": "buys sent with the end-turn"}


# How each match client sends its actions (bench.load).
VIA = {"http": "POST requests", "socket": "on the WebSocket"}


def _workers(count: int) -> str:
    return "1 worker" if count == 1 else f"{count} workers"


def check(figures: Figures, players: int, matches: int) -> list[Line]:
    lines = []
    if "compiled" in figures.engine_builds:
        rate = figures.engine_builds["compiled"]
        pure = figures.engine_builds.get("pure")
        ratio = "" if not pure else f" ({rate / pure:.2f}x the pure build)"
        lines.append(
            Line(
                "compiled engine with replay >= 15,000 battles/s on one core",
                f"{rate:,.0f}/s{ratio}",
                _verdict(rate >= 15_000),
            )
        )
    for (pool, buys, workers), got in sorted(figures.turns.items()):
        at_most = 100.0 if pool < 1_000_000 else None
        least = 1000.0 if pool < 1_000_000 else 800.0
        what = f"end-turn at {players} players, pool {pool:,}, {BUYS[buys]}, {_workers(workers)}"
        lines.append(_rate_line(what, least, at_most, got))
    for (concurrency, via, workers), got in sorted(figures.actions.items()):
        if concurrency == matches:
            what = f"match actions at {matches} matches, {VIA[via]}, {_workers(workers)}"
            lines.append(_rate_line(what, 2000.0, 30.0, got))
    engine_us = 1e6 / figures.engine_with_replay
    for fmt, used in sorted(figures.request_us.items()):
        budget = engine_us + figures.floor_us[fmt] + 60.0
        lines.append(
            Line(
                f"simulate {fmt} <= engine + floor + 60 us of server CPU ({budget:.0f} us)",
                f"{used:.0f} us ({used - engine_us - figures.floor_us[fmt]:+.0f} over the two"
                + _in_server(figures.engine_in_server_us.get(fmt))
                + ")",
                _verdict(used <= budget),
            )
        )
    for fmt, scale in sorted(figures.worker_scaling.items()):
        lines.append(
            Line(f"simulate {fmt}: 2 workers >= 1.8x 1", f"{scale:.2f}x", _verdict(scale >= 1.8))
        )
    return lines
