"""The compact_logs migration compresses every stored log, fills each seat's figures, and back."""

import gzip
from importlib import import_module
from pathlib import Path

import orjson
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.leagues.conftest import migrate

# Found by name, so that renumbering the migration at merge needs no change here.
NAME = next(Path(__file__).parents[2].glob("tournaments/migrations/*_compact_logs.py")).stem
AFTER = [("tournaments", NAME)]
BEFORE = import_module(f"tournaments.migrations.{NAME}").Migration.dependencies

DOCUMENT = {
    "format": "escoba-log/1",
    "seed": 7,
    "rounds": [
        {
            "plays": [
                {"seat": 0, "card": "7o", "capture": ["3c", "5e"], "escoba": False},
                {"seat": 1, "card": "4b", "capture": [], "escoba": False},
                {"seat": 0, "card": "1o", "capture": [], "escoba": False},
            ]
        },
        {"plays": [{"seat": 1, "card": "2c", "capture": [], "escoba": False}]},
    ],
}
META = [
    [
        {"seat": 0, "latency_ms": 3.0, "fault": None, "detail": None},
        {"seat": 1, "latency_ms": 0, "fault": "timeout", "detail": "slow"},
        {"seat": 0, "latency_ms": 1.0, "fault": None, "detail": None},
    ],
    [{"seat": 1, "latency_ms": 2.5, "fault": None, "detail": None}],
]
FAULTS = [{"seat": 1, "round": 1, "play": 2, "kind": "timeout", "detail": "slow"}]


@pytest.fixture
def latest_schema_after():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_schema_after")
def test_logs_are_compressed_and_seats_get_their_figures_and_back():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="migrator")
    Bot = old.get_model("tournaments", "Bot")
    bots = [
        Bot.objects.create(owner=user, name=f"b{n}", url="http://x", secret="s") for n in (1, 2)
    ]
    league = old.get_model("tournaments", "League").objects.create(
        name="l", creator=user, ruleset={"name": "classic"}, pool="classic/2p", players=2, seed=7
    )
    match = old.get_model("tournaments", "Match").objects.create(
        league=league, number=1, round=1, seed=7
    )
    game = old.get_model("tournaments", "Game").objects.create(
        league=league, match=match, number=1, seed=7, seating=[b.pk for b in bots],
        status="finished",
    )  # fmt: skip
    for seat, bot in enumerate(bots):
        old.get_model("tournaments", "Seat").objects.create(
            game=game, seat=seat, team=seat, bot=bot, moves=2, faults=seat
        )
    old.get_model("tournaments", "GameLog").objects.create(
        game=game, document=DOCUMENT, meta=META, faults=FAULTS
    )

    new = migrate(AFTER)
    log = new.get_model("tournaments", "GameLog").objects.get(game_id=game.pk)
    assert orjson.loads(gzip.decompress(bytes(log.document_gzip))) == DOCUMENT
    rows = orjson.loads(gzip.decompress(bytes(log.diagnostics_gzip)))
    assert [(r["round"], r["play"], r["seat"], r["move"]) for r in rows] == [
        (1, 1, 0, "7o:3c+5e"), (1, 2, 1, "4b"), (1, 3, 0, "1o"), (2, 1, 1, "2c"),
    ]  # fmt: skip
    assert all(r["request"] is None and r["debug"] is None for r in rows)
    assert rows[1]["fault"] == "timeout" and rows[1]["detail"] == "slow"
    seats = {
        s.seat: s for s in new.get_model("tournaments", "Seat").objects.filter(game_id=game.pk)
    }
    assert (seats[0].latency_p50_ms, seats[0].latency_p95_ms) == (1.0, 3.0)
    assert (seats[1].latency_p50_ms, seats[1].latency_p95_ms) == (0.0, 2.5)
    assert (seats[0].fault_kinds, seats[1].fault_kinds) == ({}, {"timeout": 1})

    back = migrate(BEFORE)
    log = back.get_model("tournaments", "GameLog").objects.get(game_id=game.pk)
    assert (log.document, log.meta, log.faults) == (DOCUMENT, META, FAULTS)
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
