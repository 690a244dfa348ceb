"""Deleting your account (docs/api.md#deleting-an-account)."""

import time

from service.api.endpoints import Body, Call, Endpoints
from service.api.keys import POOL, REVOCATIONS
from service.api.sessions import RefreshToken
from service.usecases import deletion

endpoints = Endpoints("players")


class Reauthentication(Body):
    refresh_token: RefreshToken | None = None


@endpoints.route(
    "DELETE",
    "/v1/players/me",
    summary=(
        "Delete your account: your active matches are resigned, your waiting ones left, your"
        " open runs abandoned, your name, devices and sessions forgotten, and every token of"
        f" yours refused. Needs a sign-in within {deletion.FRESH_SIGN_IN_SECONDS // 60}"
        " minutes, or a refresh_token of yours in the body (else 403 reauthentication_required)"
    ),
    body=Reauthentication,
    response=deletion.Deleted,
    errors=(400, 401, 403, 413, 415, 422, 429),
)
async def delete_me(call: Call) -> deletion.Deleted:
    body: Reauthentication = call.body
    app = call.request.app
    done = await deletion.delete_player(
        app[POOL],
        call.player,
        signed_in_ago=time.time() - call.issued_at,
        refresh_token=body.refresh_token,
    )
    # Every token of the player, of any session, at once here; other processes learn it from
    # the database within REVOCATION_SYNC_SECONDS.
    app[REVOCATIONS].revoke_player(call.player, done.tokens_after)
    return done.answer
