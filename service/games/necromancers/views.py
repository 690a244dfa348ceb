"""What everyone sees of a necromancers' match, and its schema
(docs/rules/necromancers.md#what-everyone-sees).

Everything on this table is public, so nothing is marked hidden; only the generator is left
out. Each thing the table shows names its catalogue entry under `card`: a necromancer
`necromancer`, his troop types `skeletons` and `zombies`, an attack die the face it shows
(`face-N`), the defence die `defence-die`.
"""

from typing import Any

from service.games.kernel.views import BOOL, INT, SEAT, STR, array, enum, nullable, obj
from service.games.necromancers.content import TROOPS, Ruleset
from service.games.necromancers.state import Necromancer, State


def order_rolls(state: State) -> list[list[dict[str, int]]]:
    """Each round of turn-order rolls as `{"seat", "roll"}` objects, in seat order."""
    return [[{"seat": seat, "roll": roll} for seat, roll in round_] for round_ in state.order_rolls]


def _necromancer(rules: Ruleset, necromancer: Necromancer) -> dict[str, Any]:
    seat = necromancer.seat
    starting = {"skeletons": rules.skeletons, "zombies": rules.zombies}
    troops = {
        troop: {
            "id": f"{troop}-{seat}",
            "card": troop,
            "count": necromancer.amount(troop),
            "printed": {"count": starting[troop]},
        }
        for troop in TROOPS
    }
    return {
        "seat": seat,
        "id": f"necromancer-{seat}",
        "card": "necromancer",
        "alive": necromancer.alive,
        "lives": necromancer.lives,
        "printed": {"lives": rules.lives},
        **troops,
    }


def observe(state: State, rules: Ruleset, to_act: list[int]) -> dict[str, Any]:
    defence = None
    if state.defence is not None:
        defence = {"id": "defence", "card": "defence-die", "face": state.defence}
    return {
        "order_rolls": order_rolls(state),
        "order": list(state.order),
        "turn": state.turn,
        "current": state.current,
        "phase": state.phase,
        "target": state.target,
        "dice": [
            {
                "id": f"attack-{i}",
                "card": f"face-{die.face}",
                "face": die.face,
                "status": die.status,
            }
            for i, die in enumerate(state.dice)
        ],
        "defence": defence,
        "necromancers": [_necromancer(rules, n) for n in state.necromancers],
        "eliminated": list(state.eliminated),
        "to_act": to_act,
    }


def _card(*ids: str, **fields: dict[str, Any]) -> dict[str, Any]:
    """A thing on the table: its instance `id` and which catalogue entry it is."""
    return obj(id=STR, card=enum(*ids), **fields)


def _troop(troop: str) -> dict[str, Any]:
    return _card(troop, count=INT, printed=obj(count=INT))


def schema(rules: Ruleset) -> dict[str, Any]:
    """The schema of `observe` under `rules`; the kernel adds `game`, `ruleset` and `seat`."""
    faces = [f"face-{face}" for face in sorted(rules.faces)]
    status = enum("pending", "cancelled", "resolved", "lost")
    return obj(
        order_rolls=array(array(obj(seat=SEAT, roll=INT))),
        order=array(SEAT),
        turn=INT,
        current=SEAT,
        phase=enum("target", "defend", "resolve", "over"),
        target=nullable(SEAT),
        dice=array(_card(*faces, face=INT, status=status)),
        defence=nullable(_card("defence-die", face=INT)),
        necromancers=array(
            _card(
                "necromancer",
                seat=SEAT,
                alive=BOOL,
                lives=INT,
                printed=obj(lives=INT),
                **{troop: _troop(troop) for troop in TROOPS},
            )
        ),
        eliminated=array(SEAT),
        to_act=array(SEAT),
    )
