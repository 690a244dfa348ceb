"""Turn-based matches over HTTP: games, lists, create, join, read, act, resign, events, replay
(the WebSocket is in match_socket)."""

from typing import Annotated, Any
from uuid import UUID

from pydantic import Field, StringConstraints

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.keys import MATCH_CACHE, MATCH_FEEDS, POOL, SETTINGS
from service.config import Settings
from service.usecases.matches import answers, feed, follow, lobby, play
from service.usecases.matches import replay as replays

endpoints = Endpoints("matches")

MAX_WAIT_SECONDS = 30.0

# The largest integer and bigint of PostgreSQL, the types versions and event sequences are stored
# as; the WebSocket's frames share them.
INT32 = 2**31 - 1
INT64 = 2**63 - 1
GameId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


LOADOUT = Field(
    default=None,
    description=(
        "your seat's loadout (a deck list, a character, a mode…): each game's schema and a"
        " ready-made one are in GET /v1/games, and in the components Loadout_<game>"
    ),
)


class MatchSpec(Body):
    """A match as a player or an operator asks for it."""

    game: GameId
    ruleset: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        default=None, description="default: the game's current ruleset"
    )
    seats: int = Field(ge=1, le=64)
    options: dict[str, Any] = Field(default_factory=dict)
    # Bounded loosely: the rules name a seat index out of the match's range themselves.
    bots: list[Annotated[int, Field(ge=-INT32, le=INT32)]] = Field(
        default_factory=list, max_length=64
    )
    turn_seconds: int | None = Field(default=None, ge=1, le=7 * 24 * 3600)

    def new_match(self, settings: Settings) -> lobby.NewMatch:
        return lobby.NewMatch(
            game_id=self.game,
            ruleset=self.ruleset,
            seats=self.seats,
            options=self.options,
            bots=self.bots,
            turn_seconds=self.turn_seconds,
            wait_seconds=settings.match_wait_seconds,
        )


class NewMatch(MatchSpec):
    loadout: Any = LOADOUT


class JoinMatch(Body):
    loadout: Any = LOADOUT


class MatchListQuery(Query):
    mine: bool = Field(default=False, description="your matches; otherwise the waiting ones")
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="`next` of the previous page, as it was given; none for the first page",
    )


class NewAction(Body):
    version: int = Field(ge=0, le=INT32)
    action: dict[str, Any]


class EventsQuery(Query):
    after: int = Field(default=0, ge=0, le=INT64)
    wait: float = Field(default=0.0, ge=0.0, le=MAX_WAIT_SECONDS)


def _match_id(call: Call) -> UUID:
    return call.uuid_param("match_id", "match")


def caps(settings: Settings) -> lobby.Caps:
    return lobby.Caps(settings.max_waiting_matches, settings.max_open_matches)


@endpoints.route(
    "GET",
    "/v1/games",
    summary="The turn-based games: seat range and options of each",
    response=answers.GameList,
    errors=(401, 429),
)
async def list_games(call: Call) -> answers.GameList:
    return lobby.games()


@endpoints.route(
    "GET",
    "/v1/matches",
    summary=(
        "With mine=true your matches (the seat you took last first), else those waiting for"
        " players (newest first); a page at a time: pass `next` back as `cursor`"
    ),
    query=MatchListQuery,
    response=answers.MatchList,
    errors=(401, 422, 429),
)
async def list_matches(call: Call) -> answers.MatchList:
    query: MatchListQuery = call.query
    return await lobby.list_matches(
        call.request.app[POOL], call.player, query.mine, query.limit, query.cursor
    )


@endpoints.route(
    "POST",
    "/v1/matches",
    summary="Create a match and take its first non-bot seat (accepts Idempotency-Key)",
    body=NewMatch,
    response=answers.Joined,
    status=201,
    errors=(400, 401, 409, 413, 415, 422, 429),
    idempotent=True,
)
async def create_match(call: Call) -> answers.Joined:
    body: NewMatch = call.body
    settings = call.request.app[SETTINGS]
    return await lobby.create(
        call.request.app[POOL],
        call.player,
        body.new_match(settings),
        loadout=body.loadout,
        caps=caps(settings),
        idempotency_key=call.idempotency_key,
    )


@endpoints.route(
    "POST",
    "/v1/matches/{match_id}/join",
    summary=(
        "Take the lowest free seat with your loadout; joining again answers the seat you hold"
        " (accepts Idempotency-Key)"
    ),
    body=JoinMatch,
    response=answers.Joined,
    errors=(401, 404, 409, 422, 429),
    idempotent=True,
)
async def join_match(call: Call) -> answers.Joined:
    body: JoinMatch = call.body
    return await lobby.join(
        call.request.app[POOL],
        call.player,
        _match_id(call),
        body.loadout,
        caps(call.request.app[SETTINGS]),
        idempotency_key=call.idempotency_key,
    )


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}",
    summary="The match as you may see it: your seat's view and legal actions, or a spectator's",
    response=answers.MatchState,
    errors=(401, 404, 429),
)
async def get_match(call: Call) -> answers.MatchState:
    return await play.read(call.request.app[POOL], call.player, _match_id(call))


@endpoints.route(
    "POST",
    "/v1/matches/{match_id}/actions",
    summary="Act at the version you saw (accepts Idempotency-Key)",
    body=NewAction,
    response=answers.ActionDone,
    errors=(400, 401, 403, 404, 409, 413, 415, 422, 429),
    idempotent=True,
)
async def act(call: Call) -> answers.ActionDone:
    body: NewAction = call.body
    acted = await play.act(
        call.request.app[POOL],
        call.player,
        _match_id(call),
        version=body.version,
        action=body.action,
        idempotency_key=call.idempotency_key,
        cache=call.request.app[MATCH_CACHE],
    )
    return acted.answer


class NewPreferences(Body):
    preferences: dict[str, Any] = Field(
        description="your seat's preferences by name, from the game's `preferences` in /v1/games"
    )


@endpoints.route(
    "PUT",
    "/v1/matches/{match_id}/preferences",
    summary=(
        "Set your seat's standing preferences for the rest of the match, e.g. loyalty's"
        " auto_pass (accepts Idempotency-Key)"
    ),
    body=NewPreferences,
    response=answers.ActionDone,
    errors=(400, 401, 403, 404, 409, 413, 415, 422, 429),
    idempotent=True,
)
async def prefer(call: Call) -> answers.ActionDone:
    body: NewPreferences = call.body
    return await play.prefer(
        call.request.app[POOL],
        call.player,
        _match_id(call),
        body.preferences,
        idempotency_key=call.idempotency_key,
    )


@endpoints.route(
    "POST",
    "/v1/matches/{match_id}/resign",
    summary=(
        "Give up your seat: the game's rule decides whether you lose or leave and the others"
        " go on; in a waiting match the seat is freed (accepts Idempotency-Key)"
    ),
    response=answers.ActionDone,
    errors=(400, 401, 403, 404, 409, 422, 429),
    idempotent=True,
)
async def resign(call: Call) -> answers.ActionDone:
    return await play.resign(
        call.request.app[POOL],
        call.player,
        _match_id(call),
        idempotency_key=call.idempotency_key,
    )


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/events",
    summary="Events after a sequence number that you may see; waits up to `wait` seconds",
    query=EventsQuery,
    response=feed.EventBatch,
    errors=(401, 404, 422, 429),
)
async def events(call: Call) -> feed.EventBatch:
    query: EventsQuery = call.query
    app = call.request.app
    page = await follow.wait_events(
        app[MATCH_FEEDS], call.player, _match_id(call), query.after, query.wait
    )
    return page.wire()


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/replay",
    summary="Seed, action log and every event of a finished match (409 before)",
    response=replays.MatchReplay,
    errors=(401, 404, 409, 429),
)
async def replay(call: Call) -> replays.MatchReplay:
    return await replays.replay(call.request.app[POOL], _match_id(call))
