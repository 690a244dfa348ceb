"""jsonb parameters: what the store writes reads back as the same value through PostgreSQL."""

import json
from typing import Any

import asyncpg
import pytest

from service.config import Settings
from service.store import jsonb

VALUES: list[Any] = [
    {"hand": [3, 1, 2], "deck": {"order": [], "seen": None}, "flag": True, "ratio": 0.1},
    # Integer keys are written as strings, as the json module writes them.
    {0: {"hp": 7}, 1: {"hp": 0}},
    # Past 64 bits orjson refuses; the json module writes them exactly.
    {"seed": 2**64 + 7, "negative": -(2**70)},
    ["ñandú", "\u2028", "emoji \U0001f47b"],
]


@pytest.mark.parametrize("value", VALUES)
async def test_a_value_reads_back_from_jsonb_as_the_json_module_would_write_it(
    settings: Settings, value: Any
) -> None:
    assert settings.database_url is not None
    conn = await asyncpg.connect(settings.database_url)
    try:
        stored = await conn.fetchval("SELECT $1::jsonb::text", jsonb.dumps(value))
    finally:
        await conn.close()
    assert json.loads(stored) == json.loads(json.dumps(value))
