"""Public game content: what a client shows and what a re-simulator needs."""

from pydantic import Field

from service.api.endpoints import Call, Endpoints, Query
from service.games.cryptids.content import UnknownRulesetError
from service.usecases import catalogue
from service.usecases.errors import invalid_field

endpoints = Endpoints("content")


class ContentQuery(Query):
    ruleset: str | None = Field(None, max_length=64)


@endpoints.route(
    "GET",
    "/v1/content/cryptids",
    summary="The cryptid catalogue of a ruleset (default: the current one)",
    auth="none",
    query=ContentQuery,
    response=catalogue.CryptidCatalogue,
    errors=(422,),
    database=False,
)
async def cryptids(call: Call) -> catalogue.CryptidCatalogue:
    query: ContentQuery = call.query
    try:
        return catalogue.cryptid_catalogue(query.ruleset)
    except UnknownRulesetError as exc:
        raise invalid_field("query.ruleset", str(exc)) from exc
