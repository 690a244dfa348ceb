"""The loadout refusal codes docs/api.md lists are the codes the games answer: each one is
provoked here by a loadout that breaks its rule, and the list is exactly these."""

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service.games.kernel.loadouts import LoadoutError
from service.games.loyalty.content import CONTENT as LOYALTY
from service.games.medianokte.content import CONTENT as MEDIANOKTE
from service.games.medianokte.content import banned_rule
from service.games.registry import get_game

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
# Refused by the server before the rules see the loadout (a seat that brings none).
ANSWERED_BY_THE_SERVER = {"missing_loadout"}


def _medianokte_nave(swap: dict[int, str] | None = None, size: int = 30) -> dict[str, Any]:
    sample = get_game("medianokte").sample_loadout(0, {})
    nave = list(sample["nave"])[:size]
    for index, card in (swap or {}).items():
        nave[index] = card
    return {"character": sample["character"], "nave": nave}


def _card(kind: str | None = None, family: str | None = None, banned: str | None = None) -> str:
    """A Medianokte card of that kind or family, banned under that rule (None: not banned)."""
    sample = Counter(get_game("medianokte").sample_loadout(0, {})["nave"])
    return next(
        c.id
        for c in MEDIANOKTE.cards.values()
        if (kind is None or c.kind == kind)
        and (family is None or c.family == family)
        and banned_rule(c) == banned
        and not sample[c.id]
    )


def _loyalty_deck(mode: str, first: str) -> dict[str, Any]:
    deck = LOYALTY.ready_deck(mode, "alianza")
    deck[0] = first
    return {"mode": mode, "deck": deck}


def _refusals() -> dict[str, tuple[str, Any, dict[str, Any]]]:
    """Each code: the game, a loadout breaking its rule and the match options."""
    ready = LOYALTY.ready_deck("legion", "alianza")
    first_event = 0  # the sample Nave lists its events first
    return {
        "no_loadout": ("necromancers", {"deck": []}, {}),
        "malformed": ("fate-duel", {"crew": "gremio", "extra": 1}, {}),
        "unknown_crew": ("fate-duel", {"crew": "no-such-crew"}, {}),
        "unknown_mode": ("loyalty", {"mode": "no-such-mode", "ready": "alianza"}, {}),
        "mode_mismatch": ("loyalty", {"mode": "escaramuza", "ready": "alianza"}, {}),
        "unknown_alignment": ("loyalty", {"ready": "no-such-alignment"}, {}),
        "unknown_card": ("loyalty", {"deck": ["no-such-card", *ready[1:]]}, {}),
        "too_many_copies": ("loyalty", {"deck": ["reednor"] * 5 + ready[5:]}, {}),
        "deck_size": ("loyalty", {"deck": ready[:-1]}, {}),
        "one_alignment": (
            "loyalty",
            _loyalty_deck("escaramuza", "verdugo"),
            {"mode": "escaramuza"},
        ),
        "one_faction": (
            "loyalty",
            _loyalty_deck("conquista", "novicia_alba"),
            {"mode": "conquista"},
        ),
        "unknown_character": ("medianokte", {**_medianokte_nave(), "character": "nobody"}, {}),
        "not_a_nave_card": ("medianokte", _medianokte_nave({0: _card(kind="final")}), {}),
        "neutral_event_banned": (
            "medianokte",
            _medianokte_nave({first_event: _card(banned="neutral_event_banned")}),
            {},
        ),
        "banned_in_duel": (
            "medianokte",
            _medianokte_nave({first_event: _card(banned="banned_in_duel")}),
            {},
        ),
        "nave_size": ("medianokte", _medianokte_nave(size=29), {}),
        "nave_composition": (
            "medianokte",
            _medianokte_nave({first_event: _card(family="astrali")}),
            {},
        ),
    }


def _documented() -> set[str]:
    text = " ".join(API_DOC.read_text(encoding="utf-8").split())
    listed = re.search(r"The codes answered: (.*?) Bots bring", text)
    assert listed is not None, "docs/api.md lists the loadout refusal codes"
    return set(re.findall(r"`([a-z_]+)`", listed.group(1)))


@pytest.mark.parametrize("code", sorted(_refusals()))
def test_each_loadout_code_the_api_doc_lists_is_answered(code: str) -> None:
    game_id, loadout, options = _refusals()[code]
    game = get_game(game_id)
    with pytest.raises(LoadoutError) as caught:
        game.validate_loadout(loadout, game.check_options(2, options))
    assert caught.value.code == code


def test_the_api_doc_lists_exactly_the_loadout_codes_answered() -> None:
    assert _documented() == set(_refusals()) | ANSWERED_BY_THE_SERVER
