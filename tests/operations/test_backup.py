"""scripts/backup and scripts/restore (issue 37): a dump of a database with played games and
published ratings, restored into a fresh private PostgreSQL cluster, has every game, log, seat,
rated set and rating; the scripts refuse what they cannot do, in their own words."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import test_database_url
from tournaments.models import Game, Rating
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.integration,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not Path("/usr/lib/postgresql/15/bin/initdb").exists(),
        reason="needs PostgreSQL 15's server binaries (apt-get install postgresql-15)",
    ),
]

# What must come back, row for row (the logs by a digest of their compressed bytes).
CHECKED = {
    "games": "SELECT id, league_id, match_id, status, seating, winner, totals::text, moves,"
    " faults, rated, finished_at FROM tournaments_game ORDER BY id",
    "logs": "SELECT game_id, md5(document_gzip), md5(diagnostics_gzip) FROM tournaments_gamelog"
    " ORDER BY game_id",
    "seats": "SELECT id, game_id, seat, bot_id, moves, latency_mean_ms FROM tournaments_seat"
    " ORDER BY id",
    "rated sets": "SELECT id, match_id, pool, games FROM tournaments_ratedset ORDER BY id",
    "ratings": "SELECT version_id, pool, rating, rating_low, rating_high, rank, sets, games"
    " FROM tournaments_rating ORDER BY version_id, pool",
    "rating points": "SELECT id, version_id, pool, rating FROM tournaments_ratingpoint ORDER BY id",
    "migrations": "SELECT app, name FROM django_migrations ORDER BY app, name",
}


def rows(url: str) -> dict[str, list[tuple]]:
    with psycopg.connect(url) as connection:
        return {name: connection.execute(sql).fetchall() for name, sql in CHECKED.items()}


def run(script: str, *args: str, database_url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [str(ROOT / "scripts" / script), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def fresh_cluster() -> Iterator[str]:
    """A private cluster of its own (scripts/postgres.sh with another ESCOBA_PG_DIR), destroyed
    after the test. Under /tmp with a readable path: the server runs as `postgres` under root."""
    base = Path(tempfile.mkdtemp(prefix="escoba-restore-"))
    base.chmod(0o755)
    env = {**os.environ, "ESCOBA_PG_DIR": str(base / "cluster")}
    script = str(ROOT / "scripts" / "postgres.sh")
    started = subprocess.run(
        [script, "start"], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    try:
        yield started.stdout.strip().removeprefix("DATABASE_URL=")
    finally:
        subprocess.run([script, "destroy"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def test_a_restored_dump_has_every_game_and_rating(
    transactional_db, staff, make_rated_bot, fresh_cluster, tmp_path
):
    bots = [make_rated_bot("greedy"), make_rated_bot("random"), make_rated_bot("expert")]
    league = league_create(creator=staff, name="kept", bot_ids=[b.id for b in bots], rated=True)
    league_start(league_id=league.id, user=staff)  # played eagerly, rated and fitted on commit
    assert Game.objects.filter(league=league, status=Game.Status.FINISHED).count() == 6
    assert Rating.objects.filter(pool=league.pool).count() == 3
    source = test_database_url()
    before = rows(source)

    dump = tmp_path / "nightly" / "arena.dump"
    made = run("backup", str(dump), database_url=source)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == str(dump) and dump.stat().st_size > 0
    assert not list(dump.parent.glob("*.partial"))

    restored = run("restore", str(dump), database_url=fresh_cluster)
    assert restored.returncode == 0, restored.stderr
    after = rows(fresh_cluster)
    assert {name: len(found) for name, found in after.items()} == {
        name: len(found) for name, found in before.items()
    }
    assert after == before
    assert len(after["games"]) == 6 and len(after["ratings"]) == 3

    # A second restore onto it is refused unless asked to replace, which gives the same rows.
    again = run("restore", str(dump), database_url=fresh_cluster)
    assert again.returncode == 1
    assert "restore into an empty database, or pass --replace" in again.stderr
    replaced = run("restore", str(dump), "--replace", database_url=fresh_cluster)
    assert replaced.returncode == 0, replaced.stderr
    assert rows(fresh_cluster) == before


def test_the_scripts_refuse_what_they_cannot_do(tmp_path, fresh_cluster):
    sqlite = run("backup", database_url="sqlite:///data/db.sqlite3")
    assert sqlite.returncode == 1 and "DATABASE_URL is not PostgreSQL (sqlite)" in sqlite.stderr
    unset = run("backup", database_url="")
    assert unset.returncode == 1 and "set DATABASE_URL" in unset.stderr
    missing = run("restore", str(tmp_path / "none.dump"), database_url=fresh_cluster)
    assert missing.returncode == 1 and "no such file" in missing.stderr
    junk = tmp_path / "junk.dump"
    junk.write_text("not a dump")
    refused = run("restore", str(junk), database_url=fresh_cluster)
    assert refused.returncode == 1 and "is not a dump made by scripts/backup" in refused.stderr
    unreachable = run(
        "backup", str(tmp_path / "x.dump"), database_url="postgres://a:b@127.0.0.1:1/x"
    )
    assert unreachable.returncode == 1 and "pg_dump failed" in unreachable.stderr
    assert not (tmp_path / "x.dump").exists() and not (tmp_path / "x.dump.partial").exists()
