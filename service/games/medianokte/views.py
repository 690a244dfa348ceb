"""What everyone sees of a Medianokte table, and its JSON Schema: every zone through the
kernel's `zone`, current values beside `printed` ones, seats as integers
(docs/rules/medianokte.md#what-a-seat-sees-and-the-bot)."""

from typing import Any

from service.games.kernel.views import (
    BOOL,
    INT,
    SEAT,
    array,
    card,
    enum,
    nullable,
    obj,
    zone,
    zone_schema,
)
from service.games.medianokte.content import CONTENT, POSITIONS, STATS
from service.games.medianokte.state import Astrali, State, armour, card_of, max_life, seat_rolls
from service.games.medianokte.turn import ACTIVATIONS


def observe(state: State) -> dict[str, Any]:
    turn = state.phase == "turn"
    return {
        "phase": state.phase,
        "turn": state.turn if turn else None,
        "activations_left": ACTIVATIONS - state.used if turn else None,
        "chooser": state.chooser,
        "first": state.first,
        "rolls": [seat_rolls(rolls) for rolls in state.rolls],
        "cut": list(state.cut),
        "players": [_player(state, s) for s in range(len(state.players))],
        "outcome": None if state.result is None else {
            "winners": list(state.result["winners"]),
            "ranking": [list(group) for group in state.result["ranking"]],
        },
    }  # fmt: skip


def _player(state: State, seat: int) -> dict[str, Any]:
    player = state.players[seat]
    return {
        "seat": seat,
        "out": player.out,
        "character": _character(state, seat),
        "actions": zone(
            [{"id": s.id, "card": card_of(s.id).id, "position": s.position} for s in player.slots]
        ),
        "final": {
            "id": player.final.id,
            "card": card_of(player.final.id).id,
            "energy": player.final.energy,
        },
        "army": zone([_astrali(state, a) for a in player.army]),
        "discardables": zone([{"id": d.id, "card": card_of(d.id).id} for d in player.discardables]),
        "permanents": zone(
            [
                {"id": o.id, "card": card_of(o.id).id, "position": o.position}
                for o in player.permanents
            ]
        ),
        "hand": zone([{"id": c, "card": card_of(c).id} for c in player.hand], (seat,)),
        "nave": zone([{"id": c, "card": card_of(c).id} for c in player.nave], ()),
        "vacio": zone(
            [
                {"id": v.id, "card": card_of(v.id).id, "position": v.position, "owner": v.owner}
                for v in player.vacio
            ]
        ),
    }


def _character(state: State, seat: int) -> dict[str, Any]:
    hero = state.players[seat].hero
    sheet = CONTENT.characters[state.players[seat].character]
    return {
        "id": hero.id,
        "card": sheet.id,
        "damage": hero.damage,
        "life": max_life(state, seat),
        "armour": armour(state, hero.id),
        # Nothing changes a characteristic yet; they are shown as current values all the same.
        "stats": dict(sheet.stats),
        "poison": hero.poison,
        "bleeding": hero.bleed is not None,
        "euphoria": hero.euphoria,
        "printed": {"life": sheet.life, "armour": sheet.armour, "stats": dict(sheet.stats)},
    }


def _astrali(state: State, record: Astrali) -> dict[str, Any]:
    printed = card_of(record.id)
    return {
        "id": record.id,
        "card": printed.id,
        "owner": record.owner,
        "position": record.position,
        "damage": record.damage,
        "life": printed.life,
        "armour": armour(state, record.id),
        "poison": record.poison,
        "bleeding": record.bleed is not None,
        "euphoria": record.euphoria,
        "printed": {"life": printed.life, "armour": printed.armour},
    }


# --- the schema ----------------------------------------------------------------------------

_POSITION = enum(*POSITIONS)
_STATS = obj(**{stat: INT for stat in STATS})
_CHARACTER = card(
    damage=INT,
    life=INT,
    armour=INT,
    stats=_STATS,
    poison=INT,
    bleeding=BOOL,
    euphoria=BOOL,
    printed=obj(life=INT, armour=INT, stats=_STATS),
)
_ASTRALI = card(
    owner=SEAT,
    position=_POSITION,
    damage=INT,
    life=INT,
    armour=INT,
    poison=INT,
    bleeding=BOOL,
    euphoria=BOOL,
    printed=obj(life=INT, armour=INT),
)
_PLAYER = obj(
    seat=SEAT,
    out=BOOL,
    character=_CHARACTER,
    actions=zone_schema(card(position=_POSITION)),
    final=card(energy=INT),
    army=zone_schema(_ASTRALI),
    discardables=zone_schema(card()),
    permanents=zone_schema(card(position=_POSITION)),
    hand=zone_schema(card()),
    nave=zone_schema(card()),
    vacio=zone_schema(card(position=_POSITION, owner=SEAT)),
)
_SEATS = array(SEAT)

SCHEMA = obj(
    phase=enum("cut", "choose", "turn", "over"),
    turn=nullable(SEAT),
    activations_left=nullable(INT),
    chooser=nullable(SEAT),
    first=nullable(SEAT),
    rolls=array(array(obj(seat=SEAT, roll=INT))),
    cut=array(BOOL),
    players=array(_PLAYER),
    outcome=nullable(obj(winners=_SEATS, ranking=array(_SEATS))),
)
"""The JSON Schema of `observe` as any seat or a spectator receives it."""
