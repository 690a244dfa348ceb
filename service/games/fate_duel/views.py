"""What every seat sees of a fate-duel table, and its JSON Schema
(docs/rules/fate-duel.md#what-a-seat-sees): one shape for every seat and for a spectator.

Every pile of cards is a kernel `zone`: a seat's hand only to that seat, every deck's order to
nobody, the discard piles and the cards of the duel to everyone. A crew's models are a public
zone too, each model with its sheet, its values now and its printed values.
"""

from typing import Any

from service.games.fate_duel import duel, rules
from service.games.fate_duel.cards import shown_all
from service.games.fate_duel.catalogue import stone_uses
from service.games.fate_duel.content import ATTRIBUTES, RANKS, TIMINGS, Ruleset
from service.games.fate_duel.state import State
from service.games.kernel.views import (
    BOOL,
    INT,
    SEAT,
    STR,
    array,
    card,
    enum,
    nullable,
    obj,
    zone,
    zone_schema,
)


def observe(ruleset: Ruleset, state: State) -> dict[str, Any]:
    """The table, every secret marked for the kernel to redact."""
    seats = range(len(state.crews))
    return {
        "round": state.round,
        "rounds": state.rounds,
        "first": state.first,
        "phase": state.phase,
        "pulse": rules.pulse_view(ruleset, state),
        "queue": list(state.queue),
        "crews": [rules.crew_view(ruleset, state, s) for s in seats],
        "hands": [zone(shown_all(state.hands[s]), (s,)) for s in seats],
        "decks": [zone(shown_all(state.decks[s]), ()) for s in seats],
        "discards": [zone(shown_all(state.discards[s])) for s in seats],
        "duel": None if state.duel is None else duel.summary(ruleset, state.duel),
        "eliminated": [list(group) for group in state.eliminated],
        "outcome": state.result,
    }


def _schemas(ruleset: Ruleset) -> dict[str, dict[str, Any]]:
    suit = enum(*(s.symbol for s in ruleset.suits))
    attribute = enum(*ATTRIBUTES)
    values = {a: INT for a in ATTRIBUTES}
    trigger = obj(
        name=STR,
        attribute=attribute,
        suit=suit,
        timing=enum(*TIMINGS),
        effect=enum("total", "damage", "heal"),
        amount=INT,
    )
    model = card(
        index=INT,
        name=STR,
        rank=enum(*RANKS),
        soulstones=BOOL,
        attack_damage=array(INT),
        triggers=array(trigger),
        **values,
        wounds=INT,
        damage_taken=INT,
        alive=BOOL,
        tested=BOOL,
        printed=obj(**values, wounds=INT),
    )
    crew = obj(
        seat=SEAT,
        crew=enum(*sorted(ruleset.crews)),
        name=STR,
        soulstones=INT,
        printed=obj(soulstones=INT),
        standing=BOOL,
        models=zone_schema(model),
    )
    face_card = card()
    side = obj(
        seat=SEAT,
        model=INT,
        attribute=attribute,
        value=INT,
        flip=INT,
        stones=nullable(array(enum(*stone_uses(ruleset)))),
        flipped=zone_schema(face_card),
        active=nullable(face_card),
        cheated=BOOL,
        replaced=nullable(face_card),
        trigger=nullable(STR),
        total=nullable(INT),
        suits=array(suit),
    )
    the_duel = obj(
        kind=enum("simple", "opposed"),
        step=INT,
        turn=INT,
        tn=nullable(INT),
        suit=nullable(suit),
        hazard=nullable(enum(*sorted(ruleset.hazards))),
        sides=array(side),
    )
    pulse = obj(
        id=STR,
        card=enum(*sorted(ruleset.hazards)),
        name=STR,
        attribute=attribute,
        tn=INT,
        suit=nullable(suit),
        flip=INT,
        wounds=INT,
    )
    return {"crew": crew, "card": face_card, "duel": the_duel, "pulse": pulse}


def schema(ruleset: Ruleset) -> dict[str, Any]:
    """The JSON Schema of `observe` as any seat or a spectator receives it."""
    parts = _schemas(ruleset)
    seats = array(SEAT)
    outcome = obj(winners=seats, ranking=array(seats))
    return obj(
        round=INT,
        rounds=INT,
        first=SEAT,
        phase=enum("pulse", "attack", "over"),
        pulse=parts["pulse"],
        queue=seats,
        crews=array(parts["crew"]),
        hands=array(zone_schema(parts["card"])),
        decks=array(zone_schema(parts["card"])),
        discards=array(zone_schema(parts["card"])),
        duel=nullable(parts["duel"]),
        eliminated=array(seats),
        outcome=nullable(outcome),
    )
