"""Everything the necromancers' table names by id, built from the ruleset (faces.toml).

Ids: `necromancer`; the troop types `skeletons` and `zombies` (the same words a `resolve`
action aims at); the dice `order-die`, `attack-die`, `defence-die`; and one `face-N` per
attack-die face, whose effects are that face's options, in the order faces.toml lists them.
"""

from typing import Any

from service.games.kernel.catalogue import Effect, Entry, catalogue, entry
from service.games.necromancers.content import (
    ATTACK_DICE_OTHERWISE,
    ATTACK_DICE_WITH_BOTH_TROOPS,
    DEFENCE_DICE,
    NECROMANCER,
    TROOPS,
    WOUNDS_PER_TROOP,
    FaceOption,
    Ruleset,
)

_TEMPLATES = {
    "attack": "attacks {target} each turn",
    "attack_dice": "attack dice rolled {target}: {amount}",
    "defence_dice": "rolls {amount} defence die when attacked",
    "fall": "is out at 0 lives; the last necromancer standing wins",
    "guard": "each point of damage aimed at them removes one; with none left it wounds "
    "{target} instead",
    "turn_order": "every necromancer rolls one at the start: the highest plays first, and "
    "those who tie roll again among themselves",
    "resolve": "each attack die the defence leaves is resolved on its own, by one option of "
    "its face; two dice are never added together",
    "cancel": "cancels {amount} of {target}",
    "damage": "option {option}: deal {amount} damage, each point at {target}",
    "revive": "option {option}: revive {amount} of {target}, up to the cap",
    "heal": "option {option}: heal {amount} of {target}, up to the cap",
}

_WORDS = {
    "living_enemy": "one living enemy necromancer and his troops",
    "with_both_troop_types": "while he has at least one skeleton and one zombie",
    "otherwise": "otherwise",
    "own_necromancer": "their necromancer",
    "beaten_attack_die": "the attack dice it beats strictly (a tie cancels nothing)",
}

_SINGULAR = {"skeletons": "skeleton", "zombies": "zombie", NECROMANCER: NECROMANCER}


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _target(option: FaceOption) -> tuple[str, str]:
    """The target code of a face option and its English phrase."""
    if option.effect == "damage":
        code = "enemy_" + "_or_".join(option.at)
        return code, "an enemy " + _either([_SINGULAR[what] for what in option.at])
    return "own_" + "_or_".join(option.at), "your " + _either(list(option.at))


def _face(face: int, options: tuple[FaceOption, ...], words: dict[str, str]) -> Entry:
    effects: list[Effect] = []
    for number, option in enumerate(options, start=1):
        code, phrase = _target(option)
        words[code] = phrase
        effects.append(
            {
                "kind": option.effect,
                "option": number,
                "amount": option.points,
                "target": code,
                "at": list(option.at),
            }
        )
    return entry(
        f"face-{face}",
        f"Face {face}",
        "face",
        None,
        {"face": face},
        effects,
        templates=_TEMPLATES,
        words=words,
    )


def build_catalogue(rules: Ruleset) -> dict[str, Any]:
    """The catalogue body; a face table the templates cannot word fails here, at start-up."""
    words = dict(_WORDS)
    faces = [_face(face, options, words) for face, options in sorted(rules.faces.items())]

    def make(
        id: str, name: str, kind: str, numbers: dict[str, int], effects: list[Effect]
    ) -> Entry:
        return entry(id, name, kind, None, numbers, effects, templates=_TEMPLATES, words=words)

    necromancer = make(
        NECROMANCER,
        "Necromancer",
        "necromancer",
        {"lives": rules.lives, "max_lives": rules.max_lives},
        [
            {"kind": "attack", "target": "living_enemy"},
            {
                "kind": "attack_dice",
                "amount": ATTACK_DICE_WITH_BOTH_TROOPS,
                "target": "with_both_troop_types",
            },
            {"kind": "attack_dice", "amount": ATTACK_DICE_OTHERWISE, "target": "otherwise"},
            {"kind": "defence_dice", "amount": DEFENCE_DICE},
            {"kind": "fall"},
        ],
    )
    starting = {"skeletons": rules.skeletons, "zombies": rules.zombies}
    troops = [
        make(
            troop,
            troop.capitalize(),
            "troop",
            {"count": starting[troop], "max": rules.max_troops, "wounds": WOUNDS_PER_TROOP},
            [{"kind": "guard", "target": "own_necromancer"}],
        )
        for troop in TROOPS
    ]
    sides = {"faces": rules.die_faces}
    dice = [
        make("order-die", "Turn order die", "die", sides, [{"kind": "turn_order"}]),
        make(
            "attack-die",
            "Attack die",
            "die",
            {
                **sides,
                "with_both_troop_types": ATTACK_DICE_WITH_BOTH_TROOPS,
                "otherwise": ATTACK_DICE_OTHERWISE,
            },
            [{"kind": "resolve"}],
        ),
        make(
            "defence-die",
            "Defence die",
            "die",
            {**sides, "count": DEFENCE_DICE},
            [{"kind": "cancel", "amount": 1, "target": "beaten_attack_die"}],
        ),
    ]
    game_rules = {
        "die_faces": rules.die_faces,
        "lives": rules.lives,
        "skeletons": rules.skeletons,
        "zombies": rules.zombies,
        "max_lives": rules.max_lives,
        "max_troops": rules.max_troops,
        "attack_dice": {
            "with_both_troop_types": ATTACK_DICE_WITH_BOTH_TROOPS,
            "otherwise": ATTACK_DICE_OTHERWISE,
        },
        "defence_dice": DEFENCE_DICE,
    }
    return catalogue([necromancer, *troops, *dice, *faces], game_rules)
