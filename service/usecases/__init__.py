"""Use-cases: one transaction per request, the only code that calls both `store` and `games`."""
