"""Signing in with a device id, refreshing, signing out, linking devices
(docs/api.md#players-and-sessions)."""

import time
from typing import Annotated

from aiohttp import web
from pydantic import Field, StringConstraints
from typing_extensions import TypedDict

from service.api import auth, codec
from service.api.address import client_address
from service.api.endpoints import Body, Call, Endpoints
from service.api.errors import ApiError
from service.api.keys import POOL, REVOCATIONS, SETTINGS, SHARED_LIMITS
from service.config import Settings
from service.usecases import names, sessions
from service.usecases.sessions import SignedIn

endpoints = Endpoints("sessions")

DeviceId = Annotated[
    str, StringConstraints(min_length=16, max_length=128, pattern=r"^[\x21-\x7e]+$")
]
RefreshToken = Annotated[str, StringConstraints(min_length=1, max_length=200)]


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


class Devices(TypedDict):
    devices: list[Device]


def session_answer(settings: Settings, signed: SignedIn) -> Session:
    """The sign-in's answer, with an access token for its session."""
    ttl = settings.access_token_ttl_seconds
    token = auth.issue_token(
        settings.secret_key, signed.player_id, ttl, session_id=signed.session_id
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
        app[POOL], kept, body.name, settings.refresh_token_ttl_seconds
    )
    status = 201 if signed.created else 200
    return codec.respond(call.request, session_answer(settings, signed), status)


class Refresh(Body):
    refresh_token: RefreshToken


@endpoints.route(
    "POST",
    "/v1/auth/refresh",
    summary=(
        "A new access token and refresh token for a refresh token, which stops working;"
        " a used one sent again revokes its session (401 refresh_token_reused)"
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


class Logout(Body):
    everywhere: bool = Field(False, description="sign out every session of yours, not this one")


class LoggedOut(TypedDict):
    sessions_revoked: int


@endpoints.route(
    "POST",
    "/v1/auth/logout",
    summary=(
        "Revoke this session, or with everywhere every session of yours: their access tokens"
        " are refused within REVOCATION_SYNC_SECONDS on every instance, at once on this one"
    ),
    body=Logout,
    response=LoggedOut,
    errors=(400, 401, 409, 413, 415, 422, 429),
)
async def logout(call: Call) -> LoggedOut:
    body: Logout = call.body
    app = call.request.app
    revoked, at = await sessions.logout(app[POOL], call.player, call.session_id, body.everywhere)
    now = time.time()
    for session_id in revoked:
        app[REVOCATIONS].revoke_session(session_id, now)
    if at is not None:
        app[REVOCATIONS].revoke_player(call.player, at)
    return {"sessions_revoked": len(revoked)}


class Link(Body):
    device_id: DeviceId


def devices_answer(linked: list[sessions.LinkedDevice]) -> Devices:
    return {
        "devices": [
            {"fingerprint": d.fingerprint, "linked_at": d.linked_at.isoformat()} for d in linked
        ]
    }


@endpoints.route(
    "POST",
    "/v1/auth/device/link",
    summary=(
        "Let another device id sign you in (again: nothing changes; one of another player's"
        " is 409 device_taken)"
    ),
    body=Link,
    response=Devices,
    errors=(400, 401, 409, 413, 415, 422, 429),
)
async def link(call: Call) -> Devices:
    body: Link = call.body
    app = call.request.app
    kept = sessions.device_hash(app[SETTINGS].secret_key, body.device_id)
    return devices_answer(await sessions.link(app[POOL], call.player, kept))


@endpoints.route(
    "DELETE",
    "/v1/auth/devices/{fingerprint}",
    summary="Unlink a device by its fingerprint; your only one is 409 last_device",
    response=Devices,
    errors=(401, 404, 409, 429),
)
async def unlink(call: Call) -> Devices:
    printed = call.path_param("fingerprint")
    return devices_answer(await sessions.unlink(call.request.app[POOL], call.player, printed))
