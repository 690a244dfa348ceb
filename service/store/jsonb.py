"""Values for jsonb parameters, written as text.

orjson writes a match's state in a fraction of the json module's time, and PostgreSQL parses
either text into the same jsonb. What orjson refuses (integers past 64 bits) the json module
writes. Reading stays with the json module: orjson would turn such an integer into a float.
"""

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"))
