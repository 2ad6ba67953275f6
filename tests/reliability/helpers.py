"""What the reliability tests share: waiting, a Redis to restart, and the league invariants (their
bots: tests/fakebots)."""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
import redis
from django.db.models import Count

from bots_sdk.server import ServerHandle
from scripts.private_redis import PrivateRedis
from tests.fakebots.players import NoticedBot, Slow
from tests.ratings.conftest import ratings_settled, ratings_unsettled
from tournaments.models import Game, League, Match, RatedSet, SetScore
from tournaments.selectors.leagues import league_progress
from tournaments.services.ladder import ladder_league, ladder_tick


def _wait_quietly(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether ``condition`` became true within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    if not _wait_quietly(condition, timeout):
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def full_speed(players: Iterable[Slow | NoticedBot]) -> None:
    """Take the think time off these bots: it keeps games in flight long enough for a kill, a
    restart or a stop to land mid-game; once that has landed, the rest of the league plays at
    the bots' own pace (the checks that follow are on how the league ended, not how fast)."""
    for player in players:
        (player.player if isinstance(player, NoticedBot) else player).delay_s = 0.0


def league_status(league_id: int) -> str:
    return League.objects.values_list("status", flat=True).get(pk=league_id)


def scheduled_games(league: League, timeout: float = 60) -> int:
    """The games of a started league, once its schedule is written whole (a worker writes it
    after the start, ``leagues.schedule``)."""

    def written() -> bool:
        planned = League.objects.values_list("games_planned", flat=True).get(pk=league.pk)
        return 0 < planned <= league.games.count()

    wait_for(written, timeout, "the league's schedule to be written")
    return league.games.count()


def assert_played_and_rated_exactly_once(league: League, players_per_game: int = 2) -> None:
    """Every scheduled game finished, none aborted, each rated once: every match is one rated
    set with one score per pair of its bots; once the workers' last fit is done, the published
    ratings are exactly a fresh fit's."""
    league.refresh_from_db()
    total = league.games.count()
    assert league.status == League.Status.FINISHED
    assert league_progress(league)["done"] == total
    assert league.games.filter(status=Game.Status.FINISHED, rated=True).count() == total
    matches = league.matches.count()
    assert RatedSet.objects.filter(match__league=league).count() == matches
    per_set = (
        SetScore.objects.filter(rated_set__match__league=league)
        .values("rated_set")
        .annotate(n=Count("id"))
    )
    pairs = players_per_game * (players_per_game - 1) // 2
    assert len(per_set) == matches and {row["n"] for row in per_set} == {pairs}
    wait_ratings_settled()


def wait_ratings_settled(timeout: float = 120) -> None:
    """Wait until every rated set is corrected and the published ratings are exactly a fresh
    fit's. A fit, a deal's value or a set's correction lost with a killed worker child or a
    Redis that lost its queue is what beat's sweeps are for; ``ratings_settled`` runs them as
    beat would while it waits."""
    if not _wait_quietly(ratings_settled, timeout):
        raise AssertionError(
            f"timed out after {timeout} s waiting for the last rating fit, every set corrected: "
            f"{ratings_unsettled()}"
        )


def vanish_all(servers: list[ServerHandle]) -> None:
    """Take every server off the network in the same instant, as an outage between us and them
    would: each listening socket refuses new connections and each open one is cut before any
    server is waited for (stopping them one by one lets the first bot forfeit while the last one
    still answers, which is a bot down, not a table vanished). Then stop them."""
    for handle in servers:
        handle.server.socket.shutdown(socket.SHUT_RDWR)  # a listening socket: connects refused
        handle.server.close_connections()
    for handle in servers:
        handle.stop()


def moves_of(bots: list[NoticedBot]) -> int:
    return sum(bot.moves for bot in bots)


def assert_each_game_ended_once(league: League, bots: list[NoticedBot]) -> None:
    """Every seat of every game got exactly one end notice: no game was played to its end twice
    (a game cut short and replayed from its seed never ended the first time)."""
    ends: Counter[str] = Counter()
    for bot in bots:
        ends.update(bot.ends)
    expected = {
        str(game_id): league.players for game_id in league.games.values_list("id", flat=True)
    }
    assert dict(ends) == expected


def assert_no_fault_charged(league: League) -> None:
    """The bots never failed: every fault a game records would have been charged wrongly."""
    charged = league.games.filter(status=Game.Status.FINISHED).exclude(faults=0)
    forfeits = league.games.filter(forfeit__isnull=False)
    details = [(g.id, g.log.faults[:2]) for g in charged.select_related("log")[:5]]
    assert not charged.exists() and not forfeits.exists(), details


class RestartableRedis:
    def __init__(self, directory: Path, persistent: bool = False) -> None:
        self.persistent = persistent
        self.server = PrivateRedis(directory=directory, persistent=persistent).start()
        self.url = self.server.url

    def kill(self) -> None:
        """``kill -9``: whatever was not yet in its append-only file (if any) is lost."""
        self.server.process.kill()
        self.server.process.wait(10)

    def start(self) -> None:
        self.server = PrivateRedis(
            port=self.server.port, directory=self.server.directory, persistent=self.persistent
        ).start()

    def restart(self, keep_data: bool = True) -> None:
        """Shut down with a snapshot (``SHUTDOWN SAVE``), then start on the same port and data.

        ``keep_data=False``: killed, nothing kept, as a Redis without persistence loses its queue.
        """
        if keep_data:
            client = redis.Redis.from_url(self.url)
            try:
                client.shutdown(save=True)
            except redis.ConnectionError:
                pass  # the server closes the connection as it exits
        else:
            self.server.process.kill()
            (self.server.directory / "dump.rdb").unlink(missing_ok=True)
        self.server.process.wait(10)
        self.server = PrivateRedis(port=self.server.port, directory=self.server.directory).start()

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(params=[False], ids=["no-aof"])
def restartable_redis(request) -> Iterator[RestartableRedis]:
    """A Redis of the test's own; parametrize ``restartable_redis`` indirectly with True for one
    that keeps an append-only file. A module that imports it imports ``redis_url`` too."""
    with tempfile.TemporaryDirectory(prefix="escoba-redis-restart-") as directory:
        server = RestartableRedis(Path(directory), persistent=request.param)
        yield server
        server.stop()


@pytest.fixture
def redis_url(restartable_redis: RestartableRedis) -> str:
    """Overrides the session's Redis in the module that imports it: the worker fixtures use this
    one."""
    return restartable_redis.url


class Ticker:
    """Beat's ``ladder.tick`` every ``every_s`` seconds in a thread, noting the most sets of the
    ladder ever seen in flight at once."""

    def __init__(self, every_s: float = 0.3, pool: str = "classic/2p") -> None:
        self.every_s = every_s
        self.pool = pool
        self.most_in_flight = 0
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from django.db import connection

        try:
            while not self._stop.is_set():
                ladder_tick()
                league = ladder_league(self.pool)
                now = league.matches.filter(
                    status__in=(Match.Status.PENDING, Match.Status.RUNNING)
                ).count()
                self.most_in_flight = max(self.most_in_flight, now)
                self._stop.wait(self.every_s)
        except BaseException as error:  # the test reports it
            self.errors.append(error)
        finally:
            connection.close()

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
