"""The shop between battles: seeded offers, gold, buying, merging, arranging
(docs/rules/cryptids.md#the-shop).

Pure and deterministic: the offers of (run seed, round, reroll count) are always the same, so
the server can be the only authority on what a warband may contain. Every move returns a new
state and raises `ShopError` (with a stable code) when it is illegal, changing nothing.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from service.games.cryptids.content import Ruleset, Species
from service.games.kernel.rng import SplitMix64, one_way_seed

# Sub-seed salts, published in docs/rules/cryptids.md#sub-seeds.
SHOP_SALT = "cryptids:shop:{round}:{rerolls}"
BOT_SALT = "cryptids:bot:{round}"


class ShopError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Offer:
    species: str
    tier: int
    cost: int
    frozen: bool = False


@dataclass(frozen=True, slots=True)
class Member:
    species: str
    ability: int
    level: int


@dataclass(frozen=True, slots=True)
class Shop:
    seed: int
    round: int
    gold: int
    rerolls: int
    offers: tuple[Offer | None, ...]
    warband: tuple[Member, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "round": self.round,
            "gold": self.gold,
            "rerolls": self.rerolls,
            "offers": [
                None if o is None else [o.species, o.tier, o.cost, o.frozen] for o in self.offers
            ],
            "warband": [[m.species, m.ability, m.level] for m in self.warband],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Shop":
        return cls(
            seed=int(data["seed"]),
            round=data["round"],
            gold=data["gold"],
            rerolls=data["rerolls"],
            offers=tuple(None if o is None else Offer(*o) for o in data["offers"]),
            warband=tuple(Member(*m) for m in data["warband"]),
        )


def max_tier(ruleset: Ruleset, round_: int) -> int:
    return sum(1 for first in ruleset.shop.tier_unlock_rounds if round_ >= first)


def slot_count(ruleset: Ruleset, round_: int) -> int:
    rules = ruleset.shop
    late = round_ >= rules.offer_slots_late_from_round
    return rules.offer_slots_late if late else rules.offer_slots


def _pool(ruleset: Ruleset, round_: int) -> list[Species]:
    top = max_tier(ruleset, round_)
    return sorted(
        (s for s in ruleset.species.values() if s.tier <= top), key=lambda s: (s.tier, s.id)
    )


def _offers(
    ruleset: Ruleset, seed: int, round_: int, rerolls: int, kept: Sequence[Offer | None]
) -> tuple[Offer | None, ...]:
    """Fill every slot that holds no frozen offer, drawing from the unlocked tiers in slot order."""
    salt = SHOP_SALT.format(round=round_, rerolls=rerolls).encode()
    rng = SplitMix64(one_way_seed(seed, salt))
    pool = _pool(ruleset, round_)
    out: list[Offer | None] = []
    for slot in range(slot_count(ruleset, round_)):
        old = kept[slot] if slot < len(kept) else None
        if old is not None and old.frozen:
            out.append(old)
        else:
            species = rng.pick(pool)
            out.append(Offer(species.id, species.tier, ruleset.shop.buy_cost))
    return tuple(out)


def new_shop(ruleset: Ruleset, seed: int) -> Shop:
    """The shop of round 1 of a run."""
    return Shop(seed, 1, ruleset.shop.gold_per_round, 0, _offers(ruleset, seed, 1, 0, ()), ())


def next_round(ruleset: Ruleset, shop: Shop) -> Shop:
    """After a battle: fresh gold, fresh offers; frozen offers stay (and stay frozen)."""
    round_ = shop.round + 1
    offers = _offers(ruleset, shop.seed, round_, 0, shop.offers)
    return replace(shop, round=round_, gold=ruleset.shop.gold_per_round, rerolls=0, offers=offers)


def _offer(shop: Shop, slot: int) -> Offer:
    if not 0 <= slot < len(shop.offers):
        raise ShopError("bad_slot", f"slot must be 0..{len(shop.offers) - 1}, got {slot}")
    offer = shop.offers[slot]
    if offer is None:
        raise ShopError("empty_slot", f"slot {slot} is empty")
    return offer


def _merge(ruleset: Ruleset, warband: list[Member]) -> list[Member]:
    """Merge `merge_copies` equal cryptids (species and level) into one a level up, repeatedly.

    The merged cryptid takes the place and the ability choice of the leftmost copy.
    """
    copies, max_level = ruleset.run.merge_copies, ruleset.run.max_level
    merged = True
    while merged:
        merged = False
        for i, member in enumerate(warband):
            if member.level >= max_level:
                continue
            same = [
                j
                for j, m in enumerate(warband)
                if (m.species, m.level) == (member.species, member.level)
            ]
            if len(same) >= copies:
                keep = same[:copies]
                warband[i] = replace(member, level=member.level + 1)
                warband = [m for j, m in enumerate(warband) if j not in keep[1:]]
                merged = True
                break
    return warband


def buy(ruleset: Ruleset, shop: Shop, slot: int, position: int | None = None) -> Shop:
    """Buy the offer in `slot` and place it at `position` (default: the right end)."""
    offer = _offer(shop, slot)
    if shop.gold < offer.cost:
        raise ShopError("not_enough_gold", f"costs {offer.cost} gold, you have {shop.gold}")
    size = len(shop.warband)
    where = size if position is None else position
    if not 0 <= where <= size:
        raise ShopError("bad_position", f"position must be 0..{size}, got {where}")
    warband = list(shop.warband)
    warband.insert(where, Member(offer.species, 0, 1))
    warband = _merge(ruleset, warband)
    if len(warband) > ruleset.battle.board_size:
        raise ShopError("board_full", f"the board holds {ruleset.battle.board_size} cryptids")
    offers = list(shop.offers)
    offers[slot] = None
    return replace(shop, gold=shop.gold - offer.cost, offers=tuple(offers), warband=tuple(warband))


def sell(ruleset: Ruleset, shop: Shop, position: int) -> Shop:
    if not 0 <= position < len(shop.warband):
        raise ShopError("bad_position", f"no cryptid at position {position}")
    warband = shop.warband[:position] + shop.warband[position + 1 :]
    return replace(shop, gold=shop.gold + ruleset.shop.sell_refund, warband=warband)


def reroll(ruleset: Ruleset, shop: Shop) -> Shop:
    cost = ruleset.shop.reroll_cost
    if shop.gold < cost:
        raise ShopError("not_enough_gold", f"a reroll costs {cost} gold, you have {shop.gold}")
    rerolls = shop.rerolls + 1
    offers = _offers(ruleset, shop.seed, shop.round, rerolls, shop.offers)
    return replace(shop, gold=shop.gold - cost, rerolls=rerolls, offers=offers)


def freeze(shop: Shop, slot: int, frozen: bool = True) -> Shop:
    offer = _offer(shop, slot)
    offers = list(shop.offers)
    offers[slot] = replace(offer, frozen=frozen)
    return replace(shop, offers=tuple(offers))


def arrange(shop: Shop, order: Sequence[int] | None, abilities: Sequence[int] | None) -> Shop:
    """Reorder the board (`order[i]`: the old position now at i), then choose abilities."""
    warband = list(shop.warband)
    if order is not None:
        if sorted(order) != list(range(len(warband))):
            raise ShopError(
                "bad_order",
                f"order must be a permutation of 0..{len(warband) - 1}, got {list(order)}",
            )
        warband = [warband[i] for i in order]
    if abilities is not None:
        if len(abilities) != len(warband):
            raise ShopError("bad_abilities", f"give one ability per cryptid ({len(warband)})")
        if any(a not in (0, 1) for a in abilities):
            raise ShopError("bad_abilities", "each ability is 0 or 1")
        warband = [replace(m, ability=a) for m, a in zip(warband, abilities, strict=True)]
    return replace(shop, warband=tuple(warband))


def bot_warband(ruleset: Ruleset, seed: int, round_: int) -> tuple[Member, ...]:
    """A warband for a bot ghost: what the round's accumulated gold buys from seeded offers.

    It buys `round * gold_per_round // buy_cost` cryptids one by one from the pool of that
    round; on a full board that would not merge, the new cryptid replaces the lowest tier one.
    """
    rng = SplitMix64(one_way_seed(seed, BOT_SALT.format(round=round_).encode()))
    pool = _pool(ruleset, round_)
    buys = round_ * ruleset.shop.gold_per_round // ruleset.shop.buy_cost
    warband: list[Member] = []
    for _ in range(buys):
        species = rng.pick(pool)
        candidate = _merge(ruleset, [*warband, Member(species.id, rng.below(2), 1)])
        if len(candidate) > ruleset.battle.board_size:
            weakest = min(
                range(len(warband)),
                key=lambda i: (ruleset.species[warband[i].species].tier, warband[i].level, -i),
            )
            candidate = _merge(
                ruleset, [*warband[:weakest], *warband[weakest + 1 :], candidate[-1]]
            )
        warband = candidate
    return tuple(warband)
