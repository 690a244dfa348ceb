"""What the match use-cases answer: one type per answer, and the builders they share.

These types are the endpoints' declared responses and what the OpenAPI document shows.
"""

from collections.abc import Sequence
from typing import Annotated, Any
from uuid import UUID

from pydantic import Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypedDict

from service.games.kernel.views import view_schema
from service.games.registry import REGISTRY
from service.store.match_lists import ListedMatch
from service.store.matches import MatchRow, SeatRow
from service.usecases.matches.progress import Progress, WireEvent


def _game_ids() -> list[str]:
    return sorted({game.id for game in REGISTRY.games()})


def view_schemas() -> dict[str, Any]:
    """Each game's view schema, as components `View_<game>` of the OpenAPI document."""
    return {
        f"View_{game_id}": view_schema(game_id, REGISTRY.get(game_id).view_schema())
        for game_id in _game_ids()
    }


class _AnyGameView:
    """A view's schema: one of the games' `View_<game>`, as registered when the document is
    written (docs/architecture.md#views)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        refs = [{"$ref": f"#/components/schemas/View_{game_id}"} for game_id in _game_ids()]
        return {"oneOf": refs, "description": "your seat's view; its `game` names its schema"}


View = Annotated[dict[str, Any], _AnyGameView]


class GameInfo(TypedDict):
    id: str
    name: Annotated[str, Field(description="what players call the game")]
    ruleset: Annotated[str, Field(description="the default ruleset of new matches")]
    rulesets: list[str]
    min_seats: int
    max_seats: int
    options: dict[str, Any]
    preferences: Annotated[
        dict[str, Any],
        Field(description="what a seat may set with PUT /v1/matches/{id}/preferences, by name"),
    ]
    loadout: Annotated[
        dict[str, Any] | None,
        Field(description="JSON Schema of a seat's loadout; null when the game takes none"),
    ]
    sample_loadout: Annotated[Any, Field(description="a ready-made legal loadout")]


class GameList(TypedDict):
    games: list[GameInfo]


class Joined(TypedDict):
    match_id: str
    seat: Annotated[int | None, Field(description="your seat; null when every seat is a bot")]
    version: int
    status: str


class SeatInfo(TypedDict):
    seat: int
    player_id: str | None
    bot: bool


class Prompt(TypedDict):
    kind: Annotated[str, Field(description="what you are asked: activation, response, cut, …")]
    actions: Annotated[
        list[dict[str, Any]], Field(description="the enumerated actions you may send as they are")
    ]
    params: Annotated[
        dict[str, dict[str, Any]],
        Field(description="parameterised action types: the JSON Schema of each parameter"),
    ]
    data: dict[str, Any]


class MatchState(TypedDict):
    match_id: str
    game: str
    ruleset: str
    status: Annotated[str, Field(description="waiting, active, finished or expired")]
    options: Annotated[dict[str, Any], Field(description="the match's options, resolved")]
    version: Annotated[int, Field(description="send it back with your next action")]
    seat: Annotated[int | None, Field(description="your seat; null for a spectator")]
    seats: list[SeatInfo]
    to_act: Annotated[list[int], Field(description="every seat asked something now")]
    prompt: Annotated[Prompt | None, Field(description="what you are asked now, if anything")]
    view: Annotated[View | None, Field(description="null until every seat is taken")]
    legal_actions: list[dict[str, Any]]
    turn_seconds: int | None
    turn_deadline: str | None
    outcome: dict[str, Any] | None


class ActionDone(TypedDict):
    version: int
    status: str
    events: list[WireEvent]
    view: Annotated[View | None, Field(description="null until every seat is taken")]
    to_act: list[int]
    prompt: Prompt | None
    legal_actions: list[dict[str, Any]]
    outcome: dict[str, Any] | None


class MatchSummary(TypedDict):
    match_id: str
    game: str
    ruleset: str
    status: str
    version: int
    seats: int
    options: Annotated[
        dict[str, Any], Field(description="the match's options: what a joiner plays under")
    ]
    free_seats: int
    seat: Annotated[int | None, Field(description="your seat, if you hold one")]
    asked: Annotated[bool, Field(description="whether you are asked something now")]
    created_at: str
    by_operator: Annotated[
        bool, Field(description="made by an operator (a lesson, a tournament), not by a player")
    ]
    notices: Annotated[
        list[str],
        Field(
            description=(
                "what a joiner should know first, in plain words: a public deal reveals every"
                " hand and draw to anyone who knows it"
            )
        ),
    ]


class MatchList(TypedDict):
    matches: list[MatchSummary]
    next: Annotated[
        str | None,
        Field(description="pass as `cursor` for the next page; null on the last page"),
    ]


def seat_of(seats: Sequence[SeatRow], player_id: UUID) -> int | None:
    return next((s.seat for s in seats if s.player_id == player_id), None)


def seats_wire(seats: Sequence[SeatRow]) -> list[SeatInfo]:
    return [
        {
            "seat": s.seat,
            "player_id": None if s.player_id is None else str(s.player_id),
            "bot": s.bot,
        }
        for s in seats
    ]


def joined(match_id: UUID, seat: int | None, version: int, status: str) -> Joined:
    return {"match_id": str(match_id), "seat": seat, "version": version, "status": status}


def _deadline(row: MatchRow) -> str | None:
    if row.status != "active" or row.turn_seconds is None or row.due_at is None:
        return None
    return row.due_at.isoformat()


def _prompt(progress: Progress, seat: int | None) -> Prompt | None:
    wire = progress.prompt_of(seat)
    if wire is None:
        return None
    return {
        "kind": wire["kind"],
        "actions": wire["actions"],
        "params": wire["params"],
        "data": wire["data"],
    }


def _view(progress: Progress, seat: int | None) -> dict[str, Any] | None:
    """The seat's view; none before the game is set up (a match waiting for its seats)."""
    if progress.state is None:
        return None
    return progress.game.view(progress.state, seat)


def match_state(progress: Progress, player_id: UUID) -> MatchState:
    """The match as `player_id` may see it: its seat's view and prompt, or a spectator's."""
    row = progress.row
    seat = seat_of(progress.seats, player_id)
    prompt = _prompt(progress, seat)
    return {
        "match_id": str(row.match_id),
        "game": row.game,
        "ruleset": row.ruleset,
        "status": row.status,
        "options": row.options,
        "version": row.version,
        "seat": seat,
        "seats": seats_wire(progress.seats),
        "to_act": progress.to_act(),
        "prompt": prompt,
        "view": _view(progress, seat),
        "legal_actions": [] if prompt is None else prompt["actions"],
        "turn_seconds": row.turn_seconds,
        "turn_deadline": _deadline(row),
        "outcome": row.outcome,
    }


def action_done(progress: Progress, seat: int) -> ActionDone:
    """What the acting seat learns: its events, view and prompt after the action (and bots)."""
    prompt = _prompt(progress, seat)
    return {
        "version": progress.version,
        "status": progress.status,
        "events": progress.events_for(seat),
        "view": _view(progress, seat),
        "to_act": progress.to_act(),
        "prompt": prompt,
        "legal_actions": [] if prompt is None else prompt["actions"],
        "outcome": progress.outcome,
    }


def summary(match: ListedMatch, notices: list[str]) -> MatchSummary:
    return {
        "match_id": str(match.match_id),
        "game": match.game,
        "ruleset": match.ruleset,
        "status": match.status,
        "version": match.version,
        "seats": match.seats,
        "options": match.options,
        "free_seats": match.free_seats,
        "seat": match.seat,
        "asked": match.asked,
        "created_at": match.created_at.isoformat(),
        "by_operator": match.by_operator,
        "notices": notices,
    }
