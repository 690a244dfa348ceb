"""Typed keys for what the application object holds."""

import weakref

import asyncpg
from aiohttp import web

from service.auth import VerifiedTokens
from service.config import Settings
from service.matches.notify import Hub
from service.ratelimit import RateLimiter

SETTINGS = web.AppKey("settings", Settings)
POOL = web.AppKey("pool", asyncpg.Pool)
LIMITER = web.AppKey("limiter", RateLimiter)
TOKENS = web.AppKey("tokens", VerifiedTokens)
MATCH_HUB = web.AppKey("match_hub", Hub)
MATCH_SOCKETS = web.AppKey("match_sockets", weakref.WeakSet[web.WebSocketResponse])
