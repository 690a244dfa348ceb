import re

from aiohttp import web

from service.app import create_app
from service.config import Settings
from tests.http import Api


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
    assert schema["properties"]["name"]["maxLength"] == 32
    assert schema["additionalProperties"] is False
    assert create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/PlayerCreated"
    )
    assert create["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Error"
    )
    me = document["paths"]["/v1/players/me"]["get"]
    assert me["security"] == [{"bearer": []}]
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
