"""The cryptids' catalogue: every species and token of a ruleset as a catalogue entry, its
abilities as structured effects and their English text (docs/rules/cryptids.md#the-catalogue).

The effects are read from the ruleset's abilities, the text written from them by the kernel
with the phrases below, so a ruleset using an effect, trigger or target rule that has no phrase
here is refused when it is loaded, at start-up.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any

from service.games.cryptids.content import PARAM_TRIGGERS, Ability, Ruleset, Species, Token
from service.games.kernel.catalogue import Effect, Entry, catalogue, entry
from service.games.kernel.content import ContentError

# One template per effect kind; `{levels}` is the magnitude, per level where it changes.
TEMPLATES: dict[str, str] = {
    "damage": "deal {levels} damage to {target}",
    "heal": "restore up to {levels} health to {target}",
    "shield": "give {target} {levels} shield",
    "poison": "give {target} {levels} poison",
    "stun": "give {target} {levels} stun (each skips one of its activations)",
    "threat": "give {target} +{levels} threat",
    "max_health": "give {target} +{levels} max health and health",
    "add_to_sum": "add {levels} to the dice sum",
    "reroll": "re-roll the dice; the rest of this roll's dice and roll abilities are skipped",
    "summon": "summon {levels} {token} token(s)",
}

# When an ability fires, per trigger kind; `{n}` is the N of `face:N`, `sum:N`…
TRIGGERS: dict[str, str] = {
    "face": "For each die showing {n}",
    "sum": "When the dice sum to {n}",
    "sum_at_least": "When the dice sum to {n} or more",
    "sum_at_most": "When the dice sum to {n} or less",
    "doubles": "On doubles",
    "odd": "When the sum is odd",
    "even": "When the sum is even",
    "every_roll": "Every roll",
    "on_damaged": "When it loses health",
    "on_ally_damaged": "When another ally loses health",
    "on_enemy_damaged": "When an enemy loses health",
    "on_healed": "When it is healed",
    "on_ally_healed": "When another ally is healed",
    "on_death": "When it dies",
    "on_ally_death": "When an ally dies",
    "on_enemy_death": "When an enemy dies",
}

TARGETS: dict[str, str] = {
    "highest_threat": "the enemy with the highest threat",
    "lowest_health": "the enemy with the lowest health",
    "highest_health": "the enemy with the highest health",
    "leftmost": "the leftmost enemy",
    "rightmost": "the rightmost enemy",
    "all_enemies": "every enemy",
    "random_enemy": "a random enemy",
    "self": "itself",
    "all_allies": "every ally (itself included)",
    "lowest_health_ally": "the ally with the lowest health (itself included)",
    "adjacent_allies": "the allies directly beside it",
}

# The engine reads no magnitude for a re-roll, so its effect shows none.
_UNSCALED = frozenset({"reroll"})


def ruleset_catalogue(ruleset: Ruleset) -> dict[str, Any]:
    """The catalogue body (`entries`, `rules`) of a ruleset; `ContentError` if an ability of
    it has no text."""
    species = sorted(ruleset.species.values(), key=lambda s: s.id)
    tokens = sorted(ruleset.tokens.values(), key=lambda t: t.id)
    abilities = [a for s in species for a in s.abilities] + [t.ability for t in tokens]
    words = _words(abilities, tokens)
    entries = [_species(s, words) for s in species] + [_token(t, words) for t in tokens]
    return catalogue(entries, _rules(ruleset))


def _words(abilities: list[Ability], tokens: list[Token]) -> dict[str, str]:
    missing = sorted(
        {f"effect {a.effect!r}" for a in abilities if a.effect not in TEMPLATES}
        | {f"trigger {a.trigger_kind!r}" for a in abilities if a.trigger_kind not in TRIGGERS}
        | {f"target {a.target!r}" for a in abilities if a.target not in TARGETS}
    )
    if missing:
        raise ContentError(f"catalogue: no English text for {', '.join(missing)}")
    triggers = {a.trigger: TRIGGERS[a.trigger_kind].format(n=a.trigger_value) for a in abilities}
    names = {t.id: t.name for t in tokens}
    # One table of phrases serves every code, so a token id must not read as a rule's code.
    clash = sorted(set(names) & (set(triggers) | set(TARGETS)))
    if clash:
        raise ContentError(f"catalogue: token ids {clash} are also trigger or target codes")
    return {**TARGETS, **triggers, **names}


def _effect(ability: Ability, index: int, shown: tuple[int, ...]) -> Effect:
    """Ability `index` as an effect; its text shows the magnitudes `shown`, one when they agree."""
    effect: Effect = {
        "kind": ability.effect,
        "ability": index,
        "timing": ability.trigger,
        "trigger": ability.trigger_kind,
        "target": ability.target,
    }
    if ability.trigger_kind in PARAM_TRIGGERS:
        effect["trigger_value"] = ability.trigger_value
    if ability.effect not in _UNSCALED:
        effect["amount"] = ability.magnitude[0]
        effect["magnitude"] = list(ability.magnitude)
        distinct = shown if len(set(shown)) > 1 else shown[:1]
        effect["levels"] = "/".join(str(m) for m in distinct)
    if ability.token is not None:
        effect["token"] = ability.token
    return effect


def _species(species: Species, words: Mapping[str, str]) -> Entry:
    return entry(
        species.id,
        species.name,
        "species",
        f"tier-{species.tier}",
        {
            "tier": species.tier,
            "cost": species.cost,
            "health": species.health,
            "threat": species.threat,
        },
        [_effect(a, i, a.magnitude) for i, a in enumerate(species.abilities)],
        templates=TEMPLATES,
        words=words,
    )


def _token(token: Token, words: Mapping[str, str]) -> Entry:
    # A token always plays at level 1: its text gives that magnitude only.
    ability = token.ability
    return entry(
        token.id,
        token.name,
        "token",
        None,
        {"health": token.health, "threat": token.threat},
        [_effect(ability, 0, ability.magnitude[:1])],
        templates=TEMPLATES,
        words=words,
    )


def _rules(ruleset: Ruleset) -> dict[str, Any]:
    shop = dataclasses.asdict(ruleset.shop)
    shop["tier_unlock_rounds"] = list(ruleset.shop.tier_unlock_rounds)
    return {
        "battle": dataclasses.asdict(ruleset.battle),
        "shop": shop,
        "run": dataclasses.asdict(ruleset.run),
    }
