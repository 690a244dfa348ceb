"""The loyalty game's table as a client draws it, from a view and the catalogue only.

Each side: life, loyalty, its zones (the cards where the seat may see them, else how many),
and every character's attack and defence now, with the printed values where they differ.
"""

from collections.abc import Mapping
from typing import Any

from tests.clients.names import Names


def render(view: Mapping[str, Any], names: Names) -> str:
    """The view (a match's, with the game under `inner`, or one game's) as text."""
    game = view.get("inner", view)
    lines = []
    if "inner" in view:
        score = "-".join(str(points) for points in view["score"])
        lines.append(f"game {view['leg']} of best of {view['best_of']}, score {score}")
    lines.append(_status(game, view.get("seat")))
    for seat, side in enumerate(game["sides"]):
        lines += _side(seat, side, names)
    lines += _stack(game, names)
    if game["outcome"] is not None:
        lines.append(f"over: winners {game['outcome']['winners']}")
    return "\n".join(lines)


def _status(game: Mapping[str, Any], seat: Any) -> str:
    you = "spectator" if seat is None else f"you are seat {seat}"
    active = "being chosen" if game["active"] is None else f"seat {game['active']}"
    window = "" if game["responder"] is None else f", window: seat {game['responder']}"
    where = f"turn {game['turn']}, phase {game['phase']}, active {active}{window}"
    return f"{game['mode']}, {where} ({you})"


def _side(seat: int, side: Mapping[str, Any], names: Names) -> list[str]:
    head = (
        f"seat {seat}: life {side['life']}, loyalty {side['loyalty']}, "
        f"damage taken {side['damage_taken']}, deck {side['deck']['count']}"
    )
    lines = [head, f"  hand: {_cards(side['hand'], names)}"]
    if side["known_in_hand"]:
        known = ", ".join(names.of(c["card"]) for c in side["known_in_hand"])
        lines.append(f"  known in hand: {known}")
    for label, key in (("attack", "attack_zone"), ("defence", "defence_zone")):
        characters = ", ".join(_character(c, names) for c in side[key]["cards"]) or "-"
        lines.append(f"  {label}: {characters}")
    lines.append(f"  posesiones: {_cards(side['posesiones'], names)}")
    lines.append(f"  graveyard: {_cards(side['graveyard'], names)}")
    return lines


def _cards(zone: Mapping[str, Any], names: Names) -> str:
    if zone["cards"] is None:
        return f"{zone['count']} hidden"
    return ", ".join(names.of(c["card"]) for c in zone["cards"]) or "-"


def _character(unit: Mapping[str, Any], names: Names) -> str:
    now = f"{unit['attack']}/{unit['defence']}"
    printed = f"{unit['printed']['attack']}/{unit['printed']['defence']}"
    marks = [f"printed {printed}"] if printed != now else []
    marks += [word for word in ("attacked", "used") if unit[word]]
    return f"{names.of(unit['card'])} {now}" + (f" ({', '.join(marks)})" if marks else "")


def _stack(game: Mapping[str, Any], names: Names) -> list[str]:
    lines = []
    for entry in game["stack"]:
        target = f" on {_named(game, entry['target'], names)}" if entry["target"] else ""
        lines.append(f"stack: seat {entry['seat']} plays {names.of(entry['card'])}{target}")
    if game["attack"] is not None:
        attacker, target = game["attack"]["attacker"], game["attack"]["target"]
        lines.append(f"attack: {_named(game, attacker, names)} on {_named(game, target, names)}")
    return lines


def _named(game: Mapping[str, Any], instance: str, names: Names) -> str:
    """The name of the card in play with that instance id; "life" stays as it is."""
    for side in game["sides"]:
        for key in ("attack_zone", "defence_zone", "posesiones"):
            for card in side[key]["cards"]:
                if card["id"] == instance:
                    return names.of(card["card"])
    return instance
