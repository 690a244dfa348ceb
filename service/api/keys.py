"""Typed keys for what the application object holds."""

import asyncpg
from aiohttp import web

from service.config import Settings
from service.ratelimit import RateLimiter

SETTINGS = web.AppKey("settings", Settings)
POOL = web.AppKey("pool", asyncpg.Pool)
LIMITER = web.AppKey("limiter", RateLimiter)
