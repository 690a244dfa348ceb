"""Public game content: what a client shows and what a re-simulator needs."""

from typing import Any

from pydantic import BaseModel, Field

from service.api.endpoints import Call, Endpoints, Query
from service.usecases import catalogue

endpoints = Endpoints("content")


class ContentQuery(Query):
    ruleset: str | None = Field(None, max_length=64)


class CryptidCatalogue(BaseModel):
    ruleset: str
    rulesets: list[str]
    battle: dict[str, int]
    shop: dict[str, Any]
    run: dict[str, int]
    species: list[dict[str, Any]]
    tokens: list[dict[str, Any]]


@endpoints.route(
    "GET",
    "/v1/content/cryptids",
    summary="The cryptid catalogue of a ruleset (default: the current one)",
    auth="none",
    query=ContentQuery,
    response=CryptidCatalogue,
    errors=(422,),
)
async def cryptids(call: Call) -> dict[str, Any]:
    query: ContentQuery = call.query
    return catalogue.cryptid_catalogue(query.ruleset)
