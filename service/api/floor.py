"""The benchmark's floor: the battle endpoint's HTTP path with none of its work.

Served only when BENCH_FLOOR is set. It reads the request body and answers a simulate result
encoded once in advance (a fixed five-against-five battle with its replay, about the size of a
typical answer), so `python -m bench` can tell the cost of HTTP and middleware apart from the
cost of authentication, validation, the engine and encoding.
"""

from functools import cache

from aiohttp import web

from service.api import codec
from service.api.battles import SimulateAnswer, watch_link
from service.api.endpoints import Call, Endpoints
from service.usecases import battles

endpoints = Endpoints("bench")

# With this seed the answer is as large as the mean answer over the bench corpus (~3.1 kB JSON).
FLOOR_SEED = 264
FLOOR_A = [
    ("chupacabra", 0, 2),
    ("mothman", 1, 1),
    ("trauco", 0, 1),
    ("nahual", 1, 2),
    ("wendigo", 0, 1),
]
FLOOR_B = [
    ("jersey_devil", 0, 1),
    ("el_silbon", 1, 2),
    ("caleuche", 0, 1),
    ("mapinguari", 1, 1),
    ("mokele_mbembe", 0, 2),
]


@cache
def answers() -> dict[bool, bytes]:
    """The encoded answer, keyed by whether msgpack is wanted."""
    result = battles.simulate_battle(None, FLOOR_SEED, FLOOR_A, FLOOR_B, include_replay=True)
    # The simulate endpoint's answer exactly, its viewer link included.
    answer: SimulateAnswer = {
        **result,
        "watch": watch_link(result["ruleset"], FLOOR_SEED, FLOOR_A, FLOOR_B),
    }
    return {wanted: codec.encode(answer, wanted)[0] for wanted in (False, True)}


@endpoints.route(
    "POST",
    "/v1/bench/floor",
    summary="Benchmark floor (BENCH_FLOOR only): reads the body, answers a precomputed result",
    auth="none",
    response=SimulateAnswer,
    rate_limited=False,
    database=False,
)
async def floor(call: Call) -> web.Response:
    await call.request.read()
    wanted = codec.prefers_msgpack(call.request.headers.get("Accept"))
    response = web.Response(body=answers()[wanted])
    response.content_type = codec.MSGPACK if wanted else codec.JSON
    return response
