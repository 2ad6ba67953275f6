"""The hostile URL table (tests/bots/test_addresses.py) at the level of a whole league.

A bot's URL is checked when it registers, but a row can change behind the API's back (an admin,
a restored backup, a DNS name that later points inside). So the policy holds at every call: a
league of bots at hostile URLs, under the production policy (no private addresses), plays every
game to its end, each seat faulting with ``address`` until it forfeits, and not one connection
is attempted. The URLs are taken ten to a test, each pair of them a league of its own.
"""

import socket

import pytest

from tests.bots.hostile_urls import HOSTILE_URLS
from tournaments.bot_calls.game_loop import GameLoop
from tournaments.live_feed import LiveFeeds
from tournaments.models import Game, Seat
from tournaments.services import matches
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = pytest.mark.django_db

LEAGUE_SIZE = 10


class FeedsKeptOffTheNetwork(LiveFeeds):
    """The live feeds with nothing sent: their Redis connection is the service's own, not a
    call to a bot, and this module counts every connection attempted (none may be)."""

    def _queue(self, key: str, line: bytes) -> None:
        pass


@pytest.fixture(scope="module")
def own_game_loop():
    """A game loop for this module: its caller is made at the first game, under the policy
    below (the process's usual loop may already hold a caller that allows private addresses).
    Like the usual one, it closes its connections when the process exits."""
    with pytest.MonkeyPatch.context() as patch:
        own = GameLoop(make_caller=matches.bot_caller, make_feeds=FeedsKeptOffTheNetwork)
        patch.setattr(matches, "games_loop", own)
        yield


@pytest.fixture
def production_policy(settings, own_game_loop):
    """Private addresses refused, as in production."""
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = False


@pytest.fixture
def connections(monkeypatch) -> list:
    """Every connection attempted from now on, whatever its address (none is made)."""
    attempts: list = []

    def refuse(self, address):
        attempts.append(address)
        raise ConnectionRefusedError("tests: no connection may be attempted here")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: attempts.append(host) or [])
    return attempts


@pytest.mark.parametrize(
    "first", range(0, len(HOSTILE_URLS), LEAGUE_SIZE), ids=lambda n: f"urls{n}"
)
def test_league_of_hostile_urls_finishes_without_a_connection(
    user, make_bot, production_policy, connections, first
):
    urls = HOSTILE_URLS[first : first + LEAGUE_SIZE]
    if len(urls) % 2:
        urls = [*urls, HOSTILE_URLS[0]]
    bots = []
    for number, url in enumerate(urls):
        bot = make_bot("greedy", name=f"hostile-{first + number}")
        bot.url = url  # behind the API's back: registration would have refused it
        bot.save(update_fields=["url"])
        bots.append(bot)
    # Leagues of two: each URL is called in a set of its own (a round robin of all ten would
    # call each one nine times over, and the first call is the one the policy must refuse).
    for pair in range(0, len(bots), 2):
        league = league_create(
            creator=user,
            name=f"hostile urls {pair}",
            bot_ids=[b.id for b in bots[pair : pair + 2]],
            max_faults=2,
        )
        league_start(league_id=league.id, user=user, enqueue=False)

        for match_id in league.matches.values_list("id", flat=True):
            matches.match_play(match_id=match_id)

        league.refresh_from_db()
        assert league.status == "finished"
        games = Game.objects.filter(league=league)
        assert {game.status for game in games} == {"finished"}
        for game in games:
            kinds = {fault["kind"] for fault in game.log.faults}
            assert kinds == {"address"}, (game.seating, kinds)
            assert game.forfeit is not None
        assert not Seat.objects.filter(game__league=league, moves__gt=0, faults=0).exists()
    assert connections == []
