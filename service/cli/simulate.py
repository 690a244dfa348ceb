"""`simulate --seed N A.json B.json [--json] [--ruleset ID]`: watch one battle in a terminal.

A.json and B.json hold {"cryptids": [{"species": "mothman", "ability": 0, "level": 1}, ...]}.
Colour is used only when stdout is a terminal; --json prints the result with its replay.
`simulate --version` says which build of the engine runs: compiled or pure.
"""

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from service.games.cryptids import (
    DEFAULT_RULESET,
    ENGINE_BUILD,
    Pick,
    Replay,
    Ruleset,
    UnknownRulesetError,
    WarbandError,
    load_ruleset,
    parse_warband,
    result_to_wire,
    simulate,
)

_COLOURS = {"a": "36", "b": "35", "hurt": "31", "good": "32", "dim": "2", "bold": "1"}
_BAR = 10


@dataclass(slots=True)
class _Cryptid:
    name: str
    side: str
    health: int
    max_health: int


class _Renderer:
    """Turns replay events into one line each, keeping the health it needs for bars."""

    def __init__(self, ruleset: Ruleset, replay: Replay, colour: bool) -> None:
        self.ruleset = ruleset
        self.colour = colour
        self.cryptids: dict[int, _Cryptid] = {}
        size = ruleset.battle.board_size
        for side_index, (side, warband) in enumerate((("a", replay.a), ("b", replay.b))):
            for slot, pick in enumerate(warband):
                species = ruleset.species[pick.species]
                self.cryptids[side_index * size + slot] = _Cryptid(
                    species.name, side, species.health, species.health
                )

    def paint(self, text: str, style: str) -> str:
        return f"\x1b[{_COLOURS[style]}m{text}\x1b[0m" if self.colour else text

    def who(self, uid: int) -> str:
        if uid < 0:
            return self.paint("poison", "hurt")
        c = self.cryptids[uid]
        return self.paint(f"{c.name} ({c.side.upper()})", c.side)

    def bar(self, uid: int) -> str:
        c = self.cryptids[uid]
        filled = round(_BAR * max(c.health, 0) / c.max_health) if c.max_health else 0
        bar = "█" * filled + "·" * (_BAR - filled)
        return f"{self.paint(bar, 'good' if c.health > 0 else 'hurt')} {c.health}/{c.max_health}"

    def line(self, event: Sequence[str | int]) -> str | None:
        kind, *args = event
        match kind, args:
            case "roll", [int(n), int(d1), int(d2)]:
                return self.paint(f"Roll {n:>2}  [{d1}] [{d2}]  sum {d1 + d2}", "bold")
            case "sudden_death", [int(bonus)]:
                return "  " + self.paint(f"sudden death: every hit +{bonus}", "hurt")
            case "tick", [int(uid), int(stacks)]:
                return f"  {self.who(uid)} suffers {stacks} poison"
            case "trigger", [int(uid)]:
                return None
            case "skip", [int(uid)]:
                return f"  {self.who(uid)} is stunned and skips its turn"
            case "sum", [int(uid), int(delta), int(total)]:
                return f"  {self.who(uid)} adds {delta} to the dice: sum {total}"
            case "reroll", [int(uid)]:
                return f"  {self.who(uid)} re-rolls the dice"
            case "damage", [int(src), int(dst), int(amount), int(absorbed), int(after)]:
                self.cryptids[dst].health = after
                shield = f" ({absorbed} absorbed)" if absorbed else ""
                hit = self.paint(f"{amount} damage", "hurt")
                return f"  {self.who(src)} deals {hit}{shield} to {self.who(dst)}  {self.bar(dst)}"
            case "heal", [int(src), int(dst), int(gain), int(after)]:
                self.cryptids[dst].health = after
                healed = self.paint(f"+{gain}", "good")
                return f"  {self.who(src)} heals {self.who(dst)} {healed}  {self.bar(dst)}"
            case "max_health", [int(src), int(dst), int(m), int(after)]:
                self.cryptids[dst].max_health = after
                self.cryptids[dst].health += m
                return f"  {self.who(src)} gives {self.who(dst)} +{m} max health  {self.bar(dst)}"
            case ("shield" | "poison" | "stun" | "threat") as what, [
                int(src),
                int(dst),
                int(m),
                int(after),
            ]:
                return f"  {self.who(src)} gives {self.who(dst)} {what} +{m} (now {after})"
            case "summon", [int(src), int(uid), str(token), int(slot)]:
                t = self.ruleset.tokens[token]
                side = self.cryptids[src].side
                self.cryptids[uid] = _Cryptid(t.name, side, t.health, t.health)
                return f"  {self.who(src)} summons {self.who(uid)} into slot {slot}"
            case "summon_failed", [int(src), str(token)]:
                name = self.ruleset.tokens[token].name
                return f"  {self.who(src)} cannot summon {name}: the board is full"
            case "death", [int(uid)]:
                return "  " + self.paint("✝ ", "hurt") + f"{self.who(uid)} dies"
            case "chain_limit", [int(uid)]:
                return "  " + self.paint("(chain limit reached: reaction cut)", "dim")
            case "end", [str(winner), str(reason), int(health_a), int(health_b)]:
                verdict = "Draw" if winner == "draw" else f"Side {winner.upper()} wins"
                return self.paint(
                    f"{verdict} ({reason.replace('_', ' ')}): health A {health_a}, B {health_b}",
                    "bold",
                )
        return f"  {kind} {args}"

    def lineup(self, side: str, warband: Sequence[Pick]) -> str:
        cryptids = []
        for pick in warband:
            species = self.ruleset.species[pick.species]
            ability = species.abilities[pick.ability]
            cryptids.append(
                f"{species.name} L{pick.level} {species.health}hp ({ability.trigger} → "
                f"{ability.effect} {ability.magnitude[pick.level - 1]})"
            )
        return self.paint(f"Side {side.upper()}: ", side) + " · ".join(cryptids)

    def lines(self, replay: Replay) -> Iterator[str]:
        yield self.lineup("a", replay.a)
        yield self.lineup("b", replay.b)
        for event in replay.events:
            text = self.line(event)
            if text is not None:
                yield text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m service simulate", description=__doc__)
    parser.add_argument("--seed", type=int, required=True, help="battle seed, 0..2^64-1")
    parser.add_argument("a", type=Path, help="warband of side A (JSON)")
    parser.add_argument("b", type=Path, help="warband of side B (JSON)")
    parser.add_argument("--json", action="store_true", help="print the result and replay as JSON")
    parser.add_argument("--ruleset", default=DEFAULT_RULESET, help="ruleset id")
    parser.add_argument(
        "--version",
        action="version",
        version=f"cryptid engine: {ENGINE_BUILD}",
        help="say which build of the engine runs (compiled or pure) and exit",
    )
    return parser


def main(argv: list[str], out: TextIO | None = None) -> int:
    """Run the command; argv is what follows `simulate`. Returns the exit status."""
    stdout = out if out is not None else sys.stdout
    args = _parser().parse_args(argv)
    try:
        ruleset = load_ruleset(args.ruleset)
        a = parse_warband(ruleset, json.loads(args.a.read_text(encoding="utf-8")), "a")
        b = parse_warband(ruleset, json.loads(args.b.read_text(encoding="utf-8")), "b")
        result = simulate(ruleset, args.seed, a, b)
    except (OSError, json.JSONDecodeError, UnknownRulesetError, WarbandError, ValueError) as exc:
        print(f"simulate: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(result_to_wire(result, include_replay=True), stdout, ensure_ascii=False)
        stdout.write("\n")
        return 0
    assert result.replay is not None
    renderer = _Renderer(ruleset, result.replay, colour=stdout.isatty())
    for text in renderer.lines(result.replay):
        print(text, file=stdout)
    return 0
