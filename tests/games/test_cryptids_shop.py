import re
from dataclasses import replace
from pathlib import Path

import pytest

from service.games.cryptids import run, shop
from service.games.cryptids.content import load_ruleset
from service.games.cryptids.shop import Member, Offer, Shop, ShopError
from service.games.kernel.rng import one_way_seed
from service.usecases import pairing

RULES = load_ruleset()


def _shop(gold: int = 10, warband: tuple[Member, ...] = (), offers: int = 3) -> Shop:
    species = sorted(s.id for s in RULES.species.values() if s.tier == 1)
    return Shop(
        seed=7,
        round=1,
        gold=gold,
        rerolls=0,
        offers=tuple(Offer(species[i], 1, 3) for i in range(offers)),
        warband=warband,
    )


def test_same_seed_gives_the_same_shop_and_another_seed_another() -> None:
    first = [shop.new_shop(RULES, seed).offers for seed in range(20)]
    again = [shop.new_shop(RULES, seed).offers for seed in range(20)]
    assert first == again
    assert len(set(first)) > 1


def test_round_one_offers_three_tier_one_cryptids_for_ten_gold() -> None:
    state = shop.new_shop(RULES, 99)
    assert state.gold == 10
    assert len(state.offers) == 3
    assert all(o is not None and o.tier == 1 and o.cost == 3 for o in state.offers)


@pytest.mark.parametrize(
    ("round_", "slots", "top_tier"),
    [(1, 3, 1), (2, 3, 1), (3, 3, 2), (4, 3, 2), (5, 5, 3), (7, 5, 4), (9, 5, 5), (11, 5, 6)],
)
def test_tiers_unlock_by_round_and_slots_grow_from_round_five(
    round_: int, slots: int, top_tier: int
) -> None:
    assert shop.slot_count(RULES, round_) == slots
    assert shop.max_tier(RULES, round_) == top_tier
    state = shop.new_shop(RULES, 5)
    for _ in range(round_ - 1):
        state = shop.next_round(RULES, state)
    tiers = set()
    for reroll in range(40):
        assert len(state.offers) == slots
        tiers |= {o.tier for o in state.offers if o is not None}
        state = replace(shop.reroll(RULES, replace(state, gold=1)), rerolls=reroll + 1)
    assert max(tiers) == top_tier


def test_buy_costs_three_gold_empties_the_slot_and_places_the_cryptid() -> None:
    state = shop.buy(RULES, _shop(), 1)
    assert state.gold == 7
    assert state.offers[1] is None
    assert state.warband == (Member(_shop().offers[1].species, 0, 1),)  # type: ignore[union-attr]
    first = shop.buy(RULES, state, 0, position=0)
    assert first.warband[0].species == _shop().offers[0].species  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("state", "slot", "position", "code"),
    [
        (_shop(gold=2), 0, None, "not_enough_gold"),
        (_shop(), 3, None, "bad_slot"),
        (_shop(), -1, None, "bad_slot"),
        (_shop(), 0, 1, "bad_position"),
        (replace(_shop(), offers=(None, None, None)), 0, None, "empty_slot"),
    ],
)
def test_illegal_buys_are_refused_with_a_reason(
    state: Shop, slot: int, position: int | None, code: str
) -> None:
    with pytest.raises(ShopError) as refused:
        shop.buy(RULES, state, slot, position)
    assert refused.value.code == code


def test_board_holds_five() -> None:
    others = sorted(s.id for s in RULES.species.values() if s.tier == 2)[:5]
    full = _shop(warband=tuple(Member(s, 0, 1) for s in others))
    with pytest.raises(ShopError) as refused:
        shop.buy(RULES, full, 0)
    assert refused.value.code == "board_full"


def test_three_copies_merge_into_the_next_level_at_the_leftmost_copy() -> None:
    base = _shop(gold=30)
    species = base.offers[0].species  # type: ignore[union-attr]
    other = base.offers[1].species  # type: ignore[union-attr]
    warband = (Member(other, 0, 1), Member(species, 1, 1), Member(species, 0, 1))
    merged = shop.buy(RULES, replace(base, warband=warband), 0)
    assert merged.warband == (Member(other, 0, 1), Member(species, 1, 2))


def test_buying_the_third_copy_on_a_full_board_merges_and_fits() -> None:
    base = _shop()
    species = base.offers[0].species  # type: ignore[union-attr]
    fillers = sorted(s.id for s in RULES.species.values() if s.tier == 2)[:3]
    warband = (*[Member(s, 0, 1) for s in fillers], Member(species, 0, 1), Member(species, 0, 1))
    state = shop.buy(RULES, replace(base, warband=warband), 0)
    assert len(state.warband) == 4
    assert state.warband[3] == Member(species, 0, 2)


def test_merges_cascade_up_to_the_maximum_level() -> None:
    base = _shop()
    species = base.offers[0].species  # type: ignore[union-attr]
    warband = (
        Member(species, 0, 2),
        Member(species, 0, 2),
        Member(species, 0, 1),
        Member(species, 0, 1),
    )
    state = shop.buy(RULES, replace(base, warband=warband), 0)
    assert state.warband == (Member(species, 0, 3),)
    three = (Member(species, 0, 3),) * 2
    capped = shop.buy(RULES, replace(base, warband=three), 0)
    assert [m.level for m in capped.warband] == [3, 3, 1]


def test_sell_refunds_one_gold() -> None:
    state = shop.sell(RULES, _shop(warband=(Member("chupacabra", 0, 1),)), 0)
    assert (state.gold, state.warband) == (11, ())
    with pytest.raises(ShopError, match="no cryptid"):
        shop.sell(RULES, state, 0)


def test_reroll_costs_one_and_keeps_frozen_offers() -> None:
    state = shop.freeze(shop.new_shop(RULES, 3), 1)
    rolled = shop.reroll(RULES, state)
    assert rolled.gold == 9
    assert rolled.rerolls == 1
    assert rolled.offers[1] == state.offers[1]
    assert shop.reroll(RULES, state) == rolled
    with pytest.raises(ShopError) as refused:
        shop.reroll(RULES, replace(state, gold=0))
    assert refused.value.code == "not_enough_gold"


def test_next_round_resets_gold_and_keeps_frozen_offers_frozen() -> None:
    state = shop.freeze(replace(shop.new_shop(RULES, 3), gold=1), 2)
    after = shop.next_round(RULES, state)
    assert (after.round, after.gold, after.rerolls) == (2, 10, 0)
    assert after.offers[2] == state.offers[2]
    assert after.offers[2] is not None and after.offers[2].frozen
    thawed = shop.freeze(after, 2, frozen=False)
    assert thawed.offers[2] is not None and not thawed.offers[2].frozen


def test_arrange_reorders_and_chooses_abilities() -> None:
    warband = (Member("a", 0, 1), Member("b", 0, 1), Member("c", 0, 1))
    state = shop.arrange(_shop(warband=warband), [2, 0, 1], [1, 0, 1])
    assert state.warband == (Member("c", 1, 1), Member("a", 0, 1), Member("b", 1, 1))
    for order, abilities, code in [
        ([0, 0, 1], None, "bad_order"),
        ([0, 1], None, "bad_order"),
        (None, [0, 1], "bad_abilities"),
        (None, [0, 2, 1], "bad_abilities"),
    ]:
        with pytest.raises(ShopError) as refused:
            shop.arrange(state, order, abilities)
        assert refused.value.code == code


def test_state_round_trips_through_its_stored_form() -> None:
    state = shop.buy(RULES, shop.freeze(shop.new_shop(RULES, 2**64 - 1), 0), 1)
    assert Shop.from_dict(state.to_dict()) == state


@pytest.mark.parametrize("round_", [1, 4, 10, 14])
def test_bot_warband_is_seeded_legal_and_spends_the_round_budget(round_: int) -> None:
    warband = shop.bot_warband(RULES, 1234, round_)
    assert warband == shop.bot_warband(RULES, 1234, round_)
    assert 1 <= len(warband) <= RULES.battle.board_size
    assert all(RULES.species[m.species].tier <= shop.max_tier(RULES, round_) for m in warband)
    bought = sum(3 ** (m.level - 1) for m in warband)
    assert bought <= round_ * 10 // 3
    if round_ == 1:
        assert bought == 3


def test_documented_salts_match_the_code() -> None:
    doc = (Path(__file__).parents[2] / "docs/rules/cryptids.md").read_text()
    documented = {name: value for name, value in re.findall(r'`(\w+_SALT) = "([^"]+)"`', doc)}
    assert documented == {
        "SHOP_SALT": shop.SHOP_SALT,
        "BOT_SALT": shop.BOT_SALT,
        "PAIR_SALT": pairing.PAIR_SALT,
        "BATTLE_SALT": run.BATTLE_SALT,
    }
    example = re.search(r'`one_way_seed\((\d+), b"([^"]+)"\)` is `(\d+)`', doc)
    assert example is not None
    seed, salt, value = example.groups()
    assert one_way_seed(int(seed), salt.encode()) == int(value) == run.battle_seed(int(seed), 1)
