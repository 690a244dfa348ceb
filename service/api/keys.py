"""Typed keys for what the application object holds."""

import asyncpg
from aiohttp import web

from service.api.auth import KnownPlayers, Revocations, VerifiedTokens
from service.api.open_sockets import OpenSockets
from service.api.ratelimit import RateLimiter, SharedLimits
from service.config import Settings
from service.store.notify import Hub
from service.usecases.matches.cache import MatchCache
from service.usecases.matches.feed import Feeds
from service.usecases.schema_level import SchemaWatch

SETTINGS = web.AppKey("settings", Settings)
POOL = web.AppKey("pool", asyncpg.Pool)
SCHEMA = web.AppKey("schema", SchemaWatch)
LIMITER = web.AppKey("limiter", RateLimiter)
SHARED_LIMITS = web.AppKey("shared_limits", SharedLimits)
TOKENS = web.AppKey("tokens", VerifiedTokens)
REVOCATIONS = web.AppKey("revocations", Revocations)
KNOWN_PLAYERS = web.AppKey("known_players", KnownPlayers)
MATCH_HUB = web.AppKey("match_hub", Hub)
MATCH_CACHE = web.AppKey("match_cache", MatchCache)
MATCH_FEEDS = web.AppKey("match_feeds", Feeds)
MATCH_SOCKETS = web.AppKey("match_sockets", OpenSockets)
