"""Migration 0002 moves every stored game log from the game row to its own table, and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.leagues.conftest import migrate

BEFORE = [("tournaments", "0001_initial")]
AFTER = [("tournaments", "0002_game_logs")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_schema_after")
def test_logs_move_to_their_table_and_back():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="migrator")
    Bot = old.get_model("tournaments", "Bot")
    League = old.get_model("tournaments", "League")
    Match = old.get_model("tournaments", "Match")
    Game = old.get_model("tournaments", "Game")
    bots = [
        Bot.objects.create(owner=user, name=f"b{n}", url="http://x", secret="s") for n in (1, 2)
    ]
    league = League.objects.create(
        name="l", creator=user, ruleset={"name": "classic"}, pool="classic/2p", players=2, seed=7
    )
    match = Match.objects.create(league=league, number=1, round=1, seed=7)
    fault = {"seat": 1, "round": 1, "play": 2, "kind": "timeout", "detail": "slow"}
    record = {
        "meta": [[{"latency_ms": 1.5}, {"latency_ms": 0, "fault": "timeout"}]],
        "faults": [fault],
    }
    seating = [bot.pk for bot in bots]
    played = Game.objects.create(
        league=league, match=match, number=1, seed=7, seating=seating, status="finished",
        log={"format": "escoba-log/1", "seed": 7}, record=record,
    )  # fmt: skip
    no_record = Game.objects.create(
        league=league, match=match, number=2, seed=7, seating=seating, status="finished",
        log={"format": "escoba-log/1", "seed": 8},
    )  # fmt: skip
    pending = Game.objects.create(league=league, match=match, number=3, seed=7, seating=seating)

    new = migrate(AFTER)
    GameLog = new.get_model("tournaments", "GameLog")
    logs = {log.game_id: log for log in GameLog.objects.all()}
    assert set(logs) == {played.pk, no_record.pk}
    assert logs[played.pk].document == {"format": "escoba-log/1", "seed": 7}
    assert (logs[played.pk].meta, logs[played.pk].faults) == (record["meta"], [fault])
    assert (logs[no_record.pk].meta, logs[no_record.pk].faults) == ([], [])
    field_names = {f.name for f in new.get_model("tournaments", "Game")._meta.concrete_fields}
    assert not {"log", "record"} & field_names

    old = migrate(BEFORE)
    games = {g.pk: g for g in old.get_model("tournaments", "Game").objects.all()}
    assert games[played.pk].log == {"format": "escoba-log/1", "seed": 7}
    assert games[played.pk].record == record
    assert games[no_record.pk].record == {"meta": [], "faults": []}
    assert games[pending.pk].log is None
    # back to the newest migrations (later ones too), as every other test expects
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
