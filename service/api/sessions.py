"""Signing in with a device id, refreshing, signing out, linking devices
(docs/api.md#players-and-sessions)."""

import time
from typing import Annotated

from aiohttp import web
from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from service.api import auth, codec
from service.api.address import client_address
from service.api.endpoints import Body, Call, Endpoints
from service.api.errors import ApiError
from service.api.keys import POOL, REVOCATIONS, SETTINGS, SHARED_LIMITS
from service.config import Settings
from service.guessable import guessable
from service.usecases import names, sessions
from service.usecases.sessions import SignedIn

endpoints = Endpoints("sessions")

# Fewer distinct characters than this, or a repeated pattern, and a device id is refused. An id
# made at random is not, in practice: 16 hex digits (64 bits, the shortest a client is likely
# to make, as Android's are) break the rule once in 660 million (1.3e-9 for the characters,
# 2.5e-10 for a pattern); 32 hex digits (a UUID's) once in 1e20; the clients' 43 base64url
# characters once in 1e52. "x" * 16 and "abcd" * 4 are refused.
MIN_DEVICE_DISTINCT = 4


def _unguessable(device_id: str) -> str:
    weak = guessable(device_id, MIN_DEVICE_DISTINCT)
    if weak is not None:
        raise PydanticCustomError(
            "guessable_device_id",
            "can be guessed from its shape ({weak}): make it at random, e.g. 32 random bytes in"
            " base64url",
            {"weak": weak},
        )
    return device_id


DeviceId = Annotated[
    str,
    StringConstraints(min_length=16, max_length=128, pattern=r"^[\x21-\x7e]+$"),
    AfterValidator(_unguessable),
]
RefreshToken = Annotated[str, StringConstraints(min_length=1, max_length=200)]
# A refresh token sent with a change that needs a recent sign-in, standing for one.
ProvingRefreshToken = Annotated[
    RefreshToken | None,
    Field(
        description=(
            "the refresh token of one of your live sessions: needed when your access token is"
            f" more than {sessions.FRESH_SIGN_IN_SECONDS // 60} minutes old"
        )
    ),
]


class Session(TypedDict):
    player_id: str
    name: str
    tag: Annotated[str, Field(description="four digits shown after the name: ana#0042")]
    handle: Annotated[str, Field(description="the name and tag, as others see them")]
    access_token: Annotated[str, Field(description="send as `Authorization: Bearer …`")]
    expires_in: Annotated[int, Field(description="seconds the access token is accepted")]
    refresh_token: Annotated[
        str, Field(description="keep it secret; POST it to /v1/auth/refresh for a new pair")
    ]


class Device(TypedDict):
    fingerprint: Annotated[str, Field(description="a short name of the device, not its id")]
    linked_at: str
    last_used_at: Annotated[
        str | None, Field(description="when it last signed you in; null: not since it was linked")
    ]


class Devices(TypedDict):
    devices: list[Device]


def session_answer(settings: Settings, signed: SignedIn) -> Session:
    """The sign-in's answer, with an access token for its session."""
    ttl = settings.access_token_ttl_seconds
    token = auth.issue_token(
        settings.secret_key, signed.player_id, ttl, signed.issued_at, signed.session_id
    )
    return {
        "player_id": str(signed.player_id),
        "name": signed.name,
        "tag": names.tag_text(signed.tag),
        "handle": names.handle(signed.name, signed.tag),
        "access_token": token,
        "expires_in": ttl,
        "refresh_token": signed.refresh_token,
    }


async def _sign_in_allowed(call: Call) -> None:
    """A sign-in counts against the client's address, as every credential checked does."""
    app = call.request.app
    shared = app[SHARED_LIMITS]
    address = client_address(call.request)
    await shared.take(
        app[POOL], shared.sign_ins.take(address), shared.auth_failures.take(address, cost=0)
    )


async def _failed(call: Call) -> None:
    app = call.request.app
    shared = app[SHARED_LIMITS]
    await shared.take(app[POOL], shared.auth_failures.take(client_address(call.request)))


class DeviceSignIn(Body):
    device_id: DeviceId = Field(
        description="a secret the client made once (16-128 printable ASCII characters) and keeps"
    )
    name: str | None = Field(None, description="the name of a player made for a new device")


@endpoints.route(
    "POST",
    "/v1/auth/device",
    summary=(
        "Sign in with a device id: its player, made for it (201) when it has none (200);"
        " limited per client address"
    ),
    auth="none",
    body=DeviceSignIn,
    response=Session,
    also=(201,),
    errors=(400, 413, 415, 422, 429),
)
async def device_sign_in(call: Call) -> web.Response:
    body: DeviceSignIn = call.body
    app = call.request.app
    settings = app[SETTINGS]
    await _sign_in_allowed(call)
    kept = sessions.device_hash(settings.secret_key, body.device_id)
    if not await sessions.device_known(app[POOL], kept):
        # A new device makes a player: as many as the address may register, no more.
        shared, address = app[SHARED_LIMITS], client_address(call.request)
        await shared.take(
            app[POOL],
            shared.registrations_per_hour.take(address),
            shared.registrations_per_day.take(address),
        )
    signed = await sessions.sign_in_device_once(
        app[POOL], kept, body.name, settings.refresh_token_ttl_seconds, settings.max_sessions
    )
    now = time.time()
    for session_id in signed.displaced:
        app[REVOCATIONS].revoke_session(session_id, now)
    status = 201 if signed.created else 200
    return codec.respond(call.request, session_answer(settings, signed), status)


class Refresh(Body):
    refresh_token: RefreshToken


@endpoints.route(
    "POST",
    "/v1/auth/refresh",
    summary=(
        "A new access token and refresh token for a refresh token, which stops working;"
        " retried within REFRESH_RETRY_SECONDS, before the new one is used, the same answer"
        " again; a used one sent otherwise revokes its session (401 refresh_token_reused)"
    ),
    auth="none",
    body=Refresh,
    response=Session,
    errors=(400, 401, 413, 415, 422, 429),
)
async def refresh(call: Call) -> Session:
    body: Refresh = call.body
    app = call.request.app
    settings = app[SETTINGS]
    await _sign_in_allowed(call)
    try:
        signed = await sessions.refresh(
            app[POOL],
            settings.secret_key,
            body.refresh_token,
            settings.refresh_token_ttl_seconds,
            settings.refresh_retry_seconds,
        )
    except sessions.RefreshReused as exc:
        app[REVOCATIONS].revoke_session(exc.session_id, time.time())
        await _failed(call)
        raise _unauthorized(exc) from exc
    except sessions.Unauthenticated as exc:
        await _failed(call)
        raise _unauthorized(exc) from exc
    return session_answer(settings, signed)


def _unauthorized(exc: sessions.Unauthenticated) -> ApiError:
    return ApiError(401, exc.code, exc.message, headers={"WWW-Authenticate": "Bearer"})


# What a change of who holds the account needs, as its summary says it.
_RECENT = (
    f"a sign-in within {sessions.FRESH_SIGN_IN_SECONDS // 60} minutes or a refresh_token (else"
    " 403 reauthentication_required)"
)


def _proof(call: Call, refresh_token: str | None) -> sessions.Proof:
    return sessions.Proof(time.time() - call.issued_at, refresh_token)


class Logout(Body):
    everywhere: bool = Field(
        False,
        description=(
            "sign out every session of yours, not this one (needs a recent sign-in or"
            " refresh_token)"
        ),
    )
    refresh_token: ProvingRefreshToken = None


class LoggedOut(TypedDict):
    sessions_revoked: int


@endpoints.route(
    "POST",
    "/v1/auth/logout",
    summary=(
        "Revoke this session, or with everywhere every session of yours: their access tokens"
        " are refused within REVOCATION_SYNC_SECONDS on every instance, at once on this one."
        f" Everywhere needs {_RECENT}"
    ),
    body=Logout,
    response=LoggedOut,
    errors=(400, 401, 403, 409, 413, 415, 422, 429),
)
async def logout(call: Call) -> LoggedOut:
    body: Logout = call.body
    app = call.request.app
    proof = _proof(call, body.refresh_token)
    out = await sessions.logout(
        app[POOL], call.player, call.session_id, body.everywhere, proof, app[SETTINGS].max_sessions
    )
    if out.session_id is not None:
        app[REVOCATIONS].revoke_session(out.session_id, time.time())
    if out.tokens_after is not None:
        app[REVOCATIONS].revoke_player(call.player, out.tokens_after)
    return {"sessions_revoked": out.sessions}


class Link(Body):
    device_id: DeviceId
    refresh_token: ProvingRefreshToken = None


class Unlink(Body):
    refresh_token: ProvingRefreshToken = None


def devices_answer(linked: list[sessions.LinkedDevice]) -> Devices:
    return {
        "devices": [
            {
                "fingerprint": d.fingerprint,
                "linked_at": d.linked_at.isoformat(),
                "last_used_at": None if d.last_used_at is None else d.last_used_at.isoformat(),
            }
            for d in linked
        ]
    }


@endpoints.route(
    "POST",
    "/v1/auth/device/link",
    summary=(
        "Let another device id sign you in (again: nothing changes), MAX_DEVICES at most (409"
        " too_many_devices); one of another player's is 409 device_taken and counts as a failed"
        f" sign-in of the client's address. Needs {_RECENT}"
    ),
    body=Link,
    response=Devices,
    errors=(400, 401, 403, 409, 413, 415, 422, 429),
)
async def link(call: Call) -> Devices:
    body: Link = call.body
    app = call.request.app
    settings = app[SETTINGS]
    # A link tells whether a device id is taken: it is checked as a credential is, and a miss
    # spends one of the address's failures, so that ids are guessed no faster than tokens.
    await _sign_in_allowed(call)
    kept = sessions.device_hash(settings.secret_key, body.device_id)
    proof = _proof(call, body.refresh_token)
    try:
        linked = await sessions.link(app[POOL], call.player, kept, proof, settings.max_devices)
    except sessions.DeviceTaken:
        await _failed(call)
        raise
    return devices_answer(linked)


@endpoints.route(
    "DELETE",
    "/v1/auth/devices/{fingerprint}",
    summary=(
        f"Unlink a device by its fingerprint; your only one is 409 last_device. Needs {_RECENT}"
    ),
    body=Unlink,
    response=Devices,
    errors=(400, 401, 403, 404, 409, 413, 415, 422, 429),
)
async def unlink(call: Call) -> Devices:
    body: Unlink = call.body
    app = call.request.app
    printed = call.path_param("fingerprint")
    proof = _proof(call, body.refresh_token)
    unlinked = await sessions.unlink(
        app[POOL], call.player, printed, proof, app[SETTINGS].max_devices
    )
    return devices_answer(unlinked)
