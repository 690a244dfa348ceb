"""What a seat is asked now: a prompt, with its enumerated and parameterised actions
(docs/architecture.md#the-match-kernel).

Several seats may hold a prompt at once (both players cut, a response window beside the turn
player). The server keeps one guard version per seat and bumps it only when that seat's
`prompt_fingerprint` changes, so answering one seat's prompt never stales another's answer.
"""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

Action = dict[str, Any]
"""A JSON-able dict with at least a "type" key, e.g. {"type": "target", "seat": 2}."""


def canonical(value: Any) -> str:
    """Strict JSON text: sorted keys, so equal trees give equal text; 1.0 and true stay distinct."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Prompt:
    """What one seat is asked.

    `kind` names the question (`activation`, `response`, `cut`, `defend`, ...). `actions` is the
    enumerated menu; `params` maps a parameterised action type to a JSON Schema per parameter,
    for menus too large to list (where to cut, which cards to discard); the rules check those
    parameters in `apply`. `data` is optional context for the client (e.g. the card to answer).
    `unordered` names the fields of enumerated actions whose list means a set (repeats count,
    order does not): an action that lists them in another order matches the enumerated one.
    It is the rules' to declare, not part of the wire form; each game's rules doc names them.
    `loses` holds the indices of the enumerated actions that lose the match at once; the wire
    form flags each with `"loses": true`, which an answer may send back or leave out.
    """

    kind: str
    actions: list[Action]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    unordered: tuple[str, ...] = ()
    loses: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "actions": [
                {**a, "loses": True} if i in self.loses else dict(a)
                for i, a in enumerate(self.actions)
            ],
            "params": {t: dict(p) for t, p in self.params.items()},
            "data": dict(self.data),
        }


def prompt_fingerprint(prompt: Prompt | None) -> str:
    """A stable hash of the prompt's wire form; `None` (nothing asked) has its own."""
    wire = None if prompt is None else prompt.as_dict()
    return hashlib.blake2b(canonical(wire).encode(), digest_size=16).hexdigest()
