import json
import re

import pytest
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from service.api.openapi import build_document
from service.app import ENDPOINT_TABLES, create_app
from service.config import Settings
from tests.http import Answer, Api, Document, UndocumentedAnswer


async def test_openapi_document_lists_every_route_of_the_app(api: Api, settings: Settings) -> None:
    document = (await api.get("/v1/openapi.json")).body
    assert document["openapi"] == "3.1.0"
    app = create_app(settings)
    routes = {
        (route.method.lower(), route.resource.canonical)
        for route in app.router.routes()
        if route.method != "HEAD" and isinstance(route.resource, web.Resource)
    }
    documented = {(method, path) for path, ops in document["paths"].items() for method in ops}
    assert routes, "the app has routes"
    assert routes - documented == set(), "routes missing from the OpenAPI document"
    assert documented - routes == set(), "documented paths the app does not serve"


async def test_openapi_schemas_come_from_the_request_models(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    create = document["paths"]["/v1/players"]["post"]
    ref = create["requestBody"]["content"]["application/msgpack"]["schema"]["$ref"]
    name = ref.rsplit("/", 1)[-1]
    schema = document["components"]["schemas"][name]
    assert "NFKC" in schema["properties"]["name"]["description"]
    assert schema["additionalProperties"] is False
    assert create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/PlayerCreated"
    )
    assert create["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Error"
    )
    me = document["paths"]["/v1/players/me"]["get"]
    assert me["security"] == [{"bearer": []}]
    bearer = document["components"]["securitySchemes"]["bearer"]
    assert "/v1/auth/refresh" in bearer["description"]
    for path in ("/v1/auth/device", "/v1/auth/refresh", "/v1/auth/logout"):
        assert "post" in document["paths"][path]
    assert "security" not in document["paths"]["/v1/auth/refresh"]["post"]
    refs = re.findall(r'"\$ref": "#/components/schemas/(\w+)"', str(document).replace("'", '"'))
    assert set(refs) <= set(document["components"]["schemas"])


async def test_every_refusal_an_endpoint_can_give_is_documented(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    end_turn = document["paths"]["/v1/runs/{run_id}/end-turn"]["post"]
    assert {"400", "401", "404", "409", "413", "415", "422", "429"} <= set(end_turn["responses"])
    assert end_turn["requestBody"]["required"] is False  # every field is optional
    assert document["paths"]["/v1/players"]["post"]["requestBody"]["required"] is True
    ops = document["paths"]["/v1/ops/matchmaking"]["get"]["responses"]
    assert {"401", "403"} <= set(ops)
    assert "429" not in document["paths"]["/healthz"]["get"]["responses"]


async def test_every_documented_success_has_a_schema(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    missing = [
        f"{method.upper()} {path} {status}"
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for status, answer in operation["responses"].items()
        if status.startswith("2")
        and not all("schema" in media for media in answer.get("content", {None: {}}).values())
    ]
    assert missing == []


async def test_the_replay_schema_describes_each_event_as_a_typed_tuple(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    replay = document["paths"]["/v1/battles/{battle_id}/replay"]["get"]["responses"]["200"]
    ref = replay["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    events = document["components"]["schemas"][ref]["properties"]["events"]["items"]["anyOf"]
    kinds = {
        kind
        for event in events
        for kind in event["prefixItems"][0].get("enum", [event["prefixItems"][0].get("const")])
    }
    assert {"roll", "damage", "heal", "death", "summon", "end", "chain_limit"} <= kinds
    damage = next(e for e in events if e["prefixItems"][0].get("const") == "damage")
    assert damage["minItems"] == damage["maxItems"] == 6


def test_an_answer_that_drifts_from_its_schema_is_refused() -> None:
    document = Document(build_document(ENDPOINT_TABLES))
    answer = Answer(200, CIMultiDictProxy(CIMultiDict({"Content-Type": "application/json"})), b"")
    run = {"run_id": "r", "version": 0, "ruleset": "x", "round": 1, "lives": 5, "gold": 10}
    complete = {
        **run,
        "wins": 0,
        "status": "shopping",
        "shop": [None],
        "warband": [],
        "rating_change_pending": 0.0,
        "created_at": "now",
    }
    answer.raw = json.dumps(complete).encode()
    document.check("GET", "/v1/runs/0b1d", answer)
    answer.raw = json.dumps({**complete, "lives": "five"}).encode()
    with pytest.raises(UndocumentedAnswer, match="does not match"):
        document.check("GET", "/v1/runs/0b1d", answer)
    answer.raw = json.dumps(run).encode()
    with pytest.raises(UndocumentedAnswer, match="does not match"):
        document.check("GET", "/v1/runs/0b1d", answer)
    answer.status = 418
    with pytest.raises(UndocumentedAnswer, match="not documented"):
        document.check("GET", "/v1/runs/0b1d", answer)


async def test_every_write_that_takes_an_idempotency_key_documents_it(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    keyed = {
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if any(p["name"] == "Idempotency-Key" for p in operation["parameters"])
    }
    moves = ("buy", "sell", "reroll", "freeze", "arrange", "abandon")
    runs = {f"/v1/runs/{{run_id}}/{m}" for m in moves}
    matches = {f"/v1/matches/{{match_id}}/{m}" for m in ("join", "actions", "resign")}
    expected = {("post", p) for p in {"/v1/runs", "/v1/matches", *runs, *matches}}
    preferences = ("put", "/v1/matches/{match_id}/preferences")
    tickets = {
        ("post", "/v1/matchmaking/tickets"),
        ("delete", "/v1/matchmaking/tickets/{ticket_id}"),
    }
    assert keyed == expected | {("post", "/v1/runs/{run_id}/end-turn"), preferences} | tickets
