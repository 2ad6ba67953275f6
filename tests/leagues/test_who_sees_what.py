"""Who may know what of a game (tournaments/observers.py), through every way out: the game and
match API, the games list filtered by bot, the game and league pages, the ladder's sets in play,
the live stream. Each is asked by an anonymous visitor, another user and the bots' owner.

- A rated game of a set in play names no bot, to anyone (a bot knows its game id: it could look
  its opponent up), not even once it ends: the set's other game has the same opponents, whom a
  bot told could no-show. Once the set is over its bots are named.
- Nothing of a game is shown while another game in play shares its deal (a duplicate set): no
  log, diagnostics, seed, replay or live stream.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache
from django.test import AsyncClient, Client
from django.utils import timezone
from rest_framework.test import APIClient

from games.engine import Game as EngineGame
from games.engine import Ruleset
from tournaments.models import Bot, Game, GameLog, League, Match, Seat
from tournaments.selectors.ladder import ladder_in_flight

CLASSIC = {"name": "classic", "version": 1, "options": {}}
NAMES = ("zorrito-owl", "quokka-lynx")


def _log(seed: int) -> dict:
    game = EngineGame.new(Ruleset.from_dict(CLASSIC), seed)
    while not game.is_over:
        game.apply(game.legal_moves()[0])
    return game.log()


def _set(
    owner, *, rated: bool, seeds: tuple[int, int], kind: str = "league", first_over: bool = True
) -> list[Game]:
    """A set of two games, seats swapped, the second being played; the first over (with its
    log) or, with ``first_over`` false, being played too."""
    bots = [
        Bot.objects.get_or_create(
            owner=owner, name=name, defaults={"url": f"http://127.0.0.1:9/{name}", "secret": "x"}
        )[0]
        for name in NAMES
    ]
    league = League.objects.create(
        name=f"set {rated} {seeds} {kind}", creator=owner, ruleset=CLASSIC, pool="classic/2p",
        players=2, seed=seeds[0], status=League.Status.RUNNING, rated=rated, kind=kind,
    )  # fmt: skip
    match = Match.objects.create(
        league=league, number=1, round=1, seed=seeds[0], status=Match.Status.RUNNING
    )
    match.bots.set(bots)
    games = []
    for number, (seed, seating) in enumerate(zip(seeds, ([0, 1], [1, 0]), strict=True), 1):
        game = Game.objects.create(
            league=league, match=match, number=number, seed=seed,
            seating=[bots[i].pk for i in seating],
        )  # fmt: skip
        for seat, index in enumerate(seating):
            Seat.objects.create(game=game, seat=seat, team=seat, bot=bots[index])
        games.append(game)
    cache.clear()
    if not first_over:
        return games
    log = _log(seeds[0])
    result = log["result"]
    Game.objects.filter(pk=games[0].pk).update(
        status=Game.Status.FINISHED, winner=result["winner"], totals=result["totals"],
        reason=result["reason"],
    )  # fmt: skip
    GameLog.objects.create(game=games[0], document=log)
    cache.clear()
    return games


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user(username="owner", password="x-long-pass-1")


@pytest.fixture
def viewers(owner, django_user_model):
    """(label, API client, page client) for an anonymous visitor, another user, the owner."""
    other = django_user_model.objects.create_user(username="other", password="x-long-pass-1")
    found = [("anonymous", APIClient(), Client())]
    for label, user in (("other user", other), ("owner", owner)):
        api, page = APIClient(), Client()
        api.force_authenticate(user)
        page.force_login(user)
        found.append((label, api, page))
    return found


def _names_in(text: str) -> set[str]:
    return {name for name in NAMES if name in text}


@pytest.mark.django_db
def test_a_rated_game_in_play_names_no_bot_to_anyone(owner, viewers):
    finished, playing = _set(owner, rated=True, seeds=(11, 12))  # fresh deals, as rated play
    bot = playing.seating[0]
    for label, api, page in viewers:
        detail = api.get(f"/api/games/{playing.pk}/").json()
        assert [seat["bot"] for seat in detail["seats"]] == [None, None], label
        assert detail["duplicate"]["seed"] is None, label
        match = api.get(f"/api/matches/{playing.match_id}/").json()
        assert match["bots"] == [], label
        brief = {game["id"]: game["seating"] for game in match["games"]}
        assert brief[playing.pk] == [None, None], label
        listed = {game["id"] for game in api.get(f"/api/games/?bot={bot}").json()["results"]}
        assert playing.pk not in listed and finished.pk not in listed, label
        html = page.get(f"/games/{playing.pk}/").content.decode()
        assert _names_in(html) == set(), label
        assert "seat 0" in html and "Rated game in play" in html, label
        between = page.get(f"/leagues/{playing.league_id}/games/?a={bot}").content.decode()
        assert f"/games/{playing.pk}/" not in between, label
    # The finished game of the set names no bot either, and keeps its log (which names them)
    # back: the set's other game, still in play, has the same opponents.
    for label, api, page in viewers:
        detail = api.get(f"/api/games/{finished.pk}/").json()
        assert [seat["bot"] for seat in detail["seats"]] == [None, None], label
        assert api.get(f"/api/games/{finished.pk}/log/").status_code == 409, label
        assert _names_in(page.get(f"/games/{finished.pk}/").content.decode()) == set(), label

    # The set over: named for everyone, logs shown.
    Game.objects.filter(pk=playing.pk).update(status=Game.Status.FINISHED)
    Match.objects.filter(pk=playing.match_id).update(status=Match.Status.FINISHED)
    cache.clear()
    for label, api, page in viewers:
        for game in (finished, playing):
            detail = api.get(f"/api/games/{game.pk}/").json()
            assert {seat["bot"]["name"] for seat in detail["seats"]} == set(NAMES), label
            assert _names_in(page.get(f"/games/{game.pk}/").content.decode()) == set(NAMES)
        assert api.get(f"/api/games/{finished.pk}/log/").status_code == 200, label


@pytest.mark.django_db
def test_no_list_links_a_finished_game_of_a_rated_set_in_play(owner, viewers):
    """A cheater's owner reads the league page (recent games, faults), the bot's page and "My
    bots" while its bot waits for the set's second game: a finished game of the set there would
    name the opponent it is about to meet, and it could no-show a feared one."""
    finished, playing = _set(owner, rated=True, seeds=(11, 12))
    Seat.objects.filter(game=finished).update(finished_at=timezone.now(), faults=1)
    Game.objects.filter(pk=finished.pk).update(finished_at=timezone.now())
    cache.clear()
    link = f"/games/{finished.pk}/"

    def lists(page: Client) -> dict[str, str]:
        return {
            "league page": page.get(f"/leagues/{playing.league_id}/").content.decode(),
            "bot page": page.get(f"/bots/{playing.seating[0]}/").content.decode(),
            "my bots": page.get("/my/bots/").content.decode(),
        }

    for label, _, page in viewers:
        for where, html in lists(page).items():
            assert link not in html, (label, where)

    # The set over, its games are listed where they were left out.
    Game.objects.filter(pk=playing.pk).update(status=Game.Status.FINISHED)
    Match.objects.filter(pk=playing.match_id).update(status=Match.Status.FINISHED)
    cache.clear()
    shown = lists(viewers[-1][2])  # the owner's
    assert all(link in html for html in shown.values()), [
        w for w, h in shown.items() if link not in h
    ]


@pytest.mark.django_db
def test_an_unrated_game_in_play_names_its_bots(owner, viewers):
    _, playing = _set(owner, rated=False, seeds=(11, 12))
    for label, api, _page in viewers:
        detail = api.get(f"/api/games/{playing.pk}/").json()
        assert {seat["bot"]["name"] for seat in detail["seats"]} == set(NAMES), label


@pytest.mark.django_db
def test_the_ladder_shows_its_sets_in_play_without_bots(owner):
    _, playing = _set(owner, rated=True, seeds=(11, 12), kind="ladder")
    rows = ladder_in_flight(playing.league)
    assert [row["bots"] for row in rows] == [[]]


@pytest.mark.django_db
def test_nothing_is_shown_of_a_game_whose_deal_a_game_in_play_shares(owner, viewers):
    """A user's league keeps duplicate sets: both games are dealt the same cards, seats
    swapped. While one is played, nothing is shown of the other's play, to anyone: while both
    are played, nothing of either."""
    for first, second in (_set(owner, rated=False, seeds=(21, 21), first_over=False),):
        for label, _api, page in viewers:
            for game in (first, second):
                html = page.get(f"/games/{game.pk}/").content.decode()
                assert 'data-testid="set-in-play"' in html, label
                assert "data-live-game" not in html, label
    finished, playing = _set(owner, rated=False, seeds=(22, 22))
    for label, api, page in viewers:
        for part in ("log", "diagnostics"):
            answer = api.get(f"/api/games/{finished.pk}/{part}/")
            assert answer.status_code == 409 and answer.json()["code"] == "set_in_play", label
        assert api.get(f"/api/games/{finished.pk}/").json()["duplicate"]["seed"] is None, label
        html = page.get(f"/games/{finished.pk}/").content.decode()
        assert 'data-testid="set-in-play"' in html and "replay-log" not in html, label
        # The game still played shows its public view (plays and table), never its seed.
        assert api.get(f"/api/games/{playing.pk}/").json()["duplicate"]["seed"] is None, label
        assert "data-live-game" in page.get(f"/games/{playing.pk}/").content.decode(), label

    # When the other game ends, the seal is lifted.
    Game.objects.filter(pk=playing.pk).update(status=Game.Status.FINISHED)
    GameLog.objects.create(game=playing, document=_log(22))
    cache.clear()
    assert viewers[0][1].get(f"/api/games/{finished.pk}/log/").status_code == 200
    assert viewers[0][1].get(f"/api/games/{finished.pk}/").json()["duplicate"]["seed"] == 22


@pytest.mark.django_db(transaction=True)
def test_the_live_stream_of_a_sealed_game_answers_409(owner):
    """The live view (web/game_streams.py) of a game in play whose deal another game in play shares
    sends nothing at all (a game on a deal of its own streams: tests/live)."""
    first, second = _set(owner, rated=False, seeds=(31, 31), first_over=False)

    async def get(path: str):
        return await AsyncClient().get(path)

    for game in (first, second):
        answer = async_to_sync(get)(f"/live/games/{game.pk}/")
        assert answer.status_code == 409
        assert answer.json()["code"] == "set_in_play"
