"""A text table of a Duelo de Nigromantes view, drawn as a client would: from the view and
the catalogue only (docs/rules/necromancers.md#what-everyone-sees)."""

from collections.abc import Mapping
from typing import Any

from tests.clients.names import Names

TROOPS = ("skeletons", "zombies")


def _value(thing: Mapping[str, Any], name: str) -> str:
    """Current over printed, so a client sees what was lost or brought back."""
    return f"{thing[name]}/{thing['printed'][name]}"


def _necromancer_row(view: Mapping[str, Any], necromancer: Mapping[str, Any]) -> list[str]:
    seat = necromancer["seat"]
    marks = ("*" if seat == view["current"] else "") + ("!" if seat == view["target"] else "")
    troops = [_value(necromancer[troop], "count") for troop in TROOPS]
    state = "alive" if necromancer["alive"] else "out"
    return [f"{marks}{seat}", state, _value(necromancer, "lives"), *troops]


def _dice(view: Mapping[str, Any], names: Names) -> list[str]:
    lines = []
    for die in view["dice"]:
        lines.append(f"  {die['id']}: {names.of(die['card'])} [{die['status']}]")
    defence = view["defence"]
    if defence is not None:
        lines.append(f"  {defence['id']}: {names.of(defence['card'])} showing {defence['face']}")
    return lines


def render(view: Mapping[str, Any], names: Names) -> str:
    necromancers = view["necromancers"]
    first = necromancers[0]
    header = [
        "seat",
        "state",
        names.of(first["card"]),
        *(names.of(first[troop]["card"]) for troop in TROOPS),
    ]
    rows = [header, *(_necromancer_row(view, n) for n in necromancers)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    table = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    rolls = " | ".join(
        ", ".join(f"seat {roll['seat']} rolled {roll['roll']}" for roll in round_)
        for round_ in view["order_rolls"]
    )
    attack = f"seat {view['current']} attacks"
    attack += " (choosing a target)" if view["target"] is None else f" seat {view['target']}"
    lines = [
        f"Duelo de Nigromantes, turn {view['turn']}, step {view['phase']}: {attack}",
        f"turn order {view['order']} ({rolls})",
        *table,
        "(* plays this turn, ! is attacked; values are current/printed)",
    ]
    dice = _dice(view, names)
    if dice:
        lines += ["dice:", *dice]
    if view["eliminated"]:
        lines.append(f"fallen, in order: {view['eliminated']}")
    lines.append(f"asked: {view['to_act'] or 'nobody'}; you are seat {view['seat']}")
    return "\n".join(lines)
