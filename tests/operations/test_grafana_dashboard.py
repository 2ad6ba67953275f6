"""The Grafana dashboard in docs/grafana/ loads as a dashboard and draws only what we export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tournaments.metrics import ArenaFigures, PoolFigures, metric_families

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "escoba-arena.json"
GRID_COLUMNS = 24
METRIC = re.compile(r"\b(escoba_[a-z_]+)")
RATE = re.compile(r"\b(?:rate|irate|increase)\((escoba_[a-z_]+)")


def exported() -> dict[str, str]:
    """Every sample name /metrics can expose, with its family's type, from figures that have
    something in every family."""
    pool = PoolFigures(
        games=1,
        moves=2,
        faults={"timeout": 1},
        latency_buckets=[("0.005", 1), ("+Inf", 1)],
        latency_sum_s=0.003,
    )
    figures = ArenaFigures(
        pools={"classic/2p": pool},
        queues={"games": 0},
        live_streams={"game": 1},
        problems=["counters: Redis unreachable"],
    )
    return {
        sample.name: family.type for family in metric_families(figures) for sample in family.samples
    }


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def test_it_has_a_dashboards_fields(dashboard):
    assert isinstance(dashboard["title"], str) and dashboard["title"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", dashboard["uid"])
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    assert {"from", "to"} <= dashboard["time"].keys()
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert "id" not in dashboard or dashboard["id"] is None  # importable into any Grafana


def test_every_panel_is_placed_typed_and_queries_prometheus(dashboard):
    panels = dashboard["panels"]
    assert len(panels) >= 10
    assert len({p["id"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        assert panel["type"] in {"timeseries", "stat", "gauge", "bargauge", "table"}, panel["title"]
        assert panel["title"] and panel["description"]
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= GRID_COLUMNS
        area = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                for y in range(grid["y"], grid["y"] + grid["h"])}  # fmt: skip
        assert not cells & area, f"{panel['title']} overlaps another panel"
        cells |= area
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        ref_ids = [target["refId"] for target in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids)
        for target in panel["targets"]:
            assert target["expr"].count("(") == target["expr"].count(")"), target["expr"]


def test_every_expression_names_only_metrics_we_export(dashboard):
    samples = exported()
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    queries += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    drawn = set()
    for expr in queries:
        names = METRIC.findall(expr)
        assert names, expr
        for name in names:
            assert name in samples, f"{name} is not exported ({expr})"
        for name in RATE.findall(expr):  # rate() of a gauge means nothing
            assert samples[name] in ("counter", "histogram"), expr
        drawn.update(names)
    families = {family.name for family in metric_families(ArenaFigures())}
    # Every family is on the dashboard, by one of its sample names.
    assert all(any(name.startswith(family) for name in drawn) for family in families), (
        families,
        drawn,
    )
