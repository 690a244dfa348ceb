"""`GET /v1/content/cryptids` answers the catalogue every game has (`game`, `entries`, `rules`)
beside the keys the re-simulator and the watch page read, and its schema says so."""

import json

import pytest

from service.usecases.catalogue import cryptid_catalogue
from tests.http import Api


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_the_catalogue_has_entries_with_text_and_keeps_its_keys(api: Api, fmt: str) -> None:
    answer = await api.get("/v1/content/cryptids?ruleset=cryptids-2026.12", fmt=fmt)
    assert answer.status == 200
    body = answer.body
    assert body == json.loads(json.dumps(cryptid_catalogue("cryptids-2026.12")))
    assert body["game"] == "cryptids"
    assert {"species", "tokens", "battle", "shop", "run", "engine"} <= set(body)
    entries = {e["id"]: e for e in body["entries"]}
    assert {s["id"] for s in body["species"]} | {t["id"] for t in body["tokens"]} == set(entries)
    mothman = entries["mothman"]
    assert (mothman["kind"], mothman["family"]) == ("species", "tier-1")
    assert mothman["effects"][0]["timing"] == "sum_at_least:9"
    assert mothman["effects"][0]["trigger_value"] == 9
    assert mothman["text"].startswith(
        "When the dice sum to 9 or more: deal 2/3/4 damage to a random enemy."
    )
    assert body["rules"]["battle"] == body["battle"]


async def test_the_openapi_document_describes_entries_and_rules(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    operation = document["paths"]["/v1/content/cryptids"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schemas = document["components"]["schemas"]
    schema = schemas[ref.rsplit("/", 1)[-1]]
    assert {"game", "entries", "rules", "species", "tokens", "battle"} <= set(schema["required"])
    entry_ref = schema["properties"]["entries"]["items"]["$ref"]
    entry = schemas[entry_ref.rsplit("/", 1)[-1]]
    assert {"id", "name", "kind", "family", "numbers", "effects", "text"} <= set(entry["required"])
    effect = schemas[entry["properties"]["effects"]["items"]["$ref"].rsplit("/", 1)[-1]]
    assert {"kind", "timing", "target"} <= set(effect["required"])
    assert "trigger_value" in effect["properties"]
