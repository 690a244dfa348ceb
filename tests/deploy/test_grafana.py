"""The Grafana dashboard only asks Prometheus for metrics the service really exposes."""

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.http import Api

PROMQL_WORDS = {"sum", "rate", "max", "histogram_quantile"}
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}


def metric_names(expression: str) -> set[str]:
    """Identifiers followed by `{`, `[` or `)`, once the `by (labels)` clauses are gone."""
    bare = re.sub(r"by \([^)]*\)", "", expression)
    return set(re.findall(r"([a-z_][a-z0-9_]*)\s*[\[{)]", bare)) - PROMQL_WORDS


async def test_every_metric_in_the_grafana_dashboard_is_exposed(api: Api, repo_root: Path) -> None:
    dashboard = json.loads((repo_root / "deploy/grafana/matchmaking.json").read_text())
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in metric_names(target["expr"])
    }
    scraped = (await api.get("/metrics")).raw.decode()
    # A labelled metric that nothing has touched yet has a family but no samples.
    exposed = {
        family.name + suffix
        for family in text_string_to_metric_families(scraped)
        for suffix in SUFFIXES.get(family.type, ("",))
    }
    assert "pairings_total" in used and "matchmaking_pool_depth" in used
    assert used <= exposed, f"not exposed: {sorted(used - exposed)}"
