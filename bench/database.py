"""Where a database benchmark runs: on `DATABASE_URL` when it is set, else on an embedded
PostgreSQL of its own in a temporary folder, removed afterwards."""

import asyncio
import os
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from service.runtime.embedded_db import EmbeddedPostgres

T = TypeVar("T")


def on_database(name: str, measure: Callable[[str], Coroutine[Any, Any, T]]) -> T:
    """`measure(url)` run to its end on that database; `name` labels the temporary folder."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return asyncio.run(measure(url))
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as folder:
        db = EmbeddedPostgres(Path(folder) / "pgdata")
        try:
            return asyncio.run(measure(db.start()))
        finally:
            db.stop()
