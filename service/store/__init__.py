"""SQL: asyncpg queries, one module per aggregate."""
