"""A Medianokte table drawn as text from a view, as a client would draw it: only the view and
the catalogue (through `Names`), nothing of the service."""

from collections.abc import Mapping, Sequence
from typing import Any

from tests.clients.names import Names

_TIRED = {"upright": "", "turned": " (turned)", "exhausted": " (exhausted)"}


def render(view: Mapping[str, Any], names: Names) -> str:
    lines = [_header(view)]
    for player in view["players"]:
        lines += _player(player, names, view["seat"])
    return "\n".join(lines)


def _header(view: Mapping[str, Any]) -> str:
    parts = [f"Medianokte ({view['ruleset']}), phase {view['phase']}"]
    if view["turn"] is not None:
        parts.append(f"seat {view['turn']} to play, {view['activations_left']} activations left")
    if view["chooser"] is not None and view["first"] is None:
        parts.append(f"seat {view['chooser']} chooses who plays first")
    for index, rolls in enumerate(view["rolls"], start=1):
        parts.append(
            f"roll-off {index}: " + ", ".join(f"seat {r['seat']} {r['roll']}" for r in rolls)
        )
    if view["outcome"] is not None:
        parts.append(f"over: seat(s) {view['outcome']['winners']} won")
    return " | ".join(parts)


def _changed(now: int, printed: int) -> str:
    return f"{now}" if now == printed else f"{now} (printed {printed})"


def _statuses(card: Mapping[str, Any]) -> str:
    marks = [f"poison {card['poison']}"] if card["poison"] else []
    marks += ["bleeding"] * card["bleeding"] + ["euphoria"] * card["euphoria"]
    return f" [{', '.join(marks)}]" if marks else ""


def _player(player: Mapping[str, Any], names: Names, seat: int | None) -> list[str]:
    hero = player["character"]
    printed = hero["printed"]
    you = " (you)" if player["seat"] == seat else ""
    out = " OUT" if player["out"] else ""
    stats = ", ".join(
        f"{stat} {_changed(value, printed['stats'][stat])}" for stat, value in hero["stats"].items()
    )
    lines = [
        f"Seat {player['seat']}{you}{out}: {names.of(hero['card'])}",
        f"  damage {hero['damage']}/{_changed(hero['life'], printed['life'])} life, armour "
        f"{_changed(hero['armour'], printed['armour'])}, {stats}{_statuses(hero)}",
        "  actions: "
        + ", ".join(names.of(a["card"]) + _TIRED[a["position"]] for a in player["actions"]["cards"])
        + f"; final {names.of(player['final']['card'])} ({player['final']['energy']}/3 energy)",
        "  army: " + _list(player["army"], names, _astrali),
        "  permanents: " + _list(player["permanents"], names, _placed),
        "  discardables: " + _list(player["discardables"], names, _plain),
        "  hand: " + _list(player["hand"], names, _plain),
        f"  nave: {player['nave']['count']} cards",
        "  vacio: " + _list(player["vacio"], names, _plain),
    ]
    return lines


def _plain(card: Mapping[str, Any], names: Names) -> str:
    return names.of(card["card"])


def _placed(card: Mapping[str, Any], names: Names) -> str:
    return names.of(card["card"]) + _TIRED[card["position"]]


def _astrali(card: Mapping[str, Any], names: Names) -> str:
    printed = card["printed"]
    return (
        f"{names.of(card['card'])}{_TIRED[card['position']]} damage {card['damage']}/"
        f"{_changed(card['life'], printed['life'])}, armour "
        f"{_changed(card['armour'], printed['armour'])}{_statuses(card)}"
    )


def _list(zone: Mapping[str, Any], names: Names, show: Any) -> str:
    cards: Sequence[Mapping[str, Any]] | None = zone["cards"]
    if cards is None:
        return f"{zone['count']} hidden"
    return ", ".join(show(card, names) for card in cards) or "-"
