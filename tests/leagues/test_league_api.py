"""The league, match, game and ranking endpoints: shapes, permissions, 400s that name the field."""

import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from tests.clients import client_for
from tests.leagues.conftest import example_bot
from tests.performance.data import rows_made, rows_restore
from tournaments import queueing
from tournaments.api.errors import SetInPlay
from tournaments.models import Game, GameLog, League, Match
from tournaments.services.league_creation import ERROR_NOT_BOT_OWNER
from tournaments.services.league_states import ERROR_NOT_CREATOR
from tournaments.services.rating_fits import HISTORY_MIN_CHANGE

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def made_played_league(django_db_setup, django_db_blocker, example_servers):
    """A finished rated two-player league of three checked bots, made by staff through the API
    (eager Celery plays it on start): played once for the module (tests/performance/data.py
    ``rows_made``), restored by ``played_league`` in each test that asks for it."""
    return rows_made(django_db_blocker, lambda: _league_played(example_servers))


@pytest.fixture
def played_league(db, made_played_league) -> League:
    league, rows = made_played_league
    rows_restore(rows)
    return League.objects.get(pk=league.pk)  # as played: made returned it when it started


def _league_played(example_servers) -> League:
    user = get_user_model().objects.create_user(username="spring-staff", is_staff=True)
    user_client = client_for(user)
    bots = [
        example_bot(example_servers, name, health="healthy")
        for name in ("greedy", "random", "random7")
    ]
    created = user_client.post(
        "/api/leagues/",
        {
            "name": "Spring",
            "ruleset": {"name": "classic"},
            "bots": [b.id for b in bots],
            "rated": True,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    league_id = created.json()["id"]
    started = user_client.post(f"/api/leagues/{league_id}/start/")
    assert started.status_code == 202
    return League.objects.get(pk=league_id)


def test_create_answers_400_naming_each_bad_field(user_client):
    response = user_client.post(
        "/api/leagues/",
        {
            "name": "",
            "players": 5,
            "games_per_pairing": "two",
            "bots": ["x"],
            "ruleset": 7,
        },
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert {"name", "players", "games_per_pairing", "bots.0", "ruleset"} <= set(body["errors"])


def test_create_answers_400_for_service_rules(user_client):
    response = user_client.post(
        "/api/leagues/",
        {"name": "odd", "games_per_pairing": 3, "move_timeout_ms": 0, "bots": [424242, 424243]},
        format="json",
    )
    assert response.status_code == 400
    assert {"games_per_pairing", "move_timeout_ms"} <= set(response.json()["errors"])
    response = user_client.post(
        "/api/leagues/",
        {
            "name": "rules",
            "ruleset": {"name": "classic", "options": {"target": "many"}},
            "bots": [424242, 424243],
        },
        format="json",
    )
    assert response.status_code == 400
    assert "target" in response.json()["errors"]["ruleset"][0]


def test_anonymous_users_read_but_cannot_create(api_client):
    assert api_client.get("/api/leagues/").status_code == 200
    assert api_client.post("/api/leagues/", {"name": "x"}, format="json").status_code in (401, 403)


def test_only_the_creator_runs_the_league(user_client, make_bot):
    stranger = make_bot("greedy")
    league_id = user_client.post(
        "/api/leagues/",
        {"name": "mine", "bots": [stranger.id, make_bot("random").id]},
        format="json",
    ).json()["id"]
    other = client_for(stranger.owner)
    for verb in ("start", "pause", "resume", "cancel"):
        response = other.post(f"/api/leagues/{league_id}/{verb}/")
        assert response.status_code == 403
        assert response.json()["detail"] == ERROR_NOT_CREATOR
    # the creator may not pause an open league: a 400 that says why
    response = user_client.post(f"/api/leagues/{league_id}/pause/")
    assert response.status_code == 400


def test_owners_enrol_only_their_own_bots(user, user_client, make_bot):
    # A league is created with enough bots for a table; owners may enrol more while it is open.
    founders = [make_bot("expert", owner=user), make_bot("random7", owner=user)]
    league_id = user_client.post(
        "/api/leagues/", {"name": "open", "bots": [b.id for b in founders]}, format="json"
    ).json()["id"]
    theirs = make_bot("random")
    mine = make_bot("greedy", owner=user)
    response = user_client.post(f"/api/leagues/{league_id}/entries/", {"bot": theirs.id})
    assert response.status_code == 403 and response.json()["detail"] == ERROR_NOT_BOT_OWNER
    response = client_for(theirs.owner).post(
        f"/api/leagues/{league_id}/entries/", {"bot": theirs.id}
    )
    assert response.status_code == 201
    response = user_client.post(f"/api/leagues/{league_id}/entries/", {"bot": mine.id})
    assert {b["name"] for b in response.json()["bots"]} == {
        theirs.name,
        mine.name,
        *(b.name for b in founders),
    }
    assert user_client.post(f"/api/leagues/{league_id}/entries/", {"bot": 0}).status_code == 400
    response = user_client.post(f"/api/leagues/{league_id}/entries/", {"bot": 987654})
    assert response.status_code == 400 and "bot" in response.json()["errors"]


def test_league_detail_has_progress_standings_and_crosstable(played_league, api_client):
    body = api_client.get(f"/api/leagues/{played_league.id}/").json()
    assert body["status"] == "finished"
    assert body["progress"] == {"done": 6, "total": 6, "aborted": 0, "faults": 0}
    row = body["standings"][0]
    assert {"points", "games", "wins", "draws", "losses", "points_for", "points_against"} <= set(
        row
    )
    assert isinstance(row["rating"], float) and "elo" not in row  # one figure: the pool's
    table = api_client.get(f"/api/leagues/{played_league.id}/crosstable/").json()
    assert len(table["rows"]) == 3 and len(table["rows"][0]["cells"]) == 3


def test_matches_games_and_logs(played_league, api_client):
    matches = api_client.get(f"/api/matches/?league={played_league.id}").json()
    assert matches["count"] == 3 and "next" in matches
    game_id = matches["results"][0]["games"][0]["id"]
    game = api_client.get(f"/api/games/{game_id}/").json()
    assert [seat["seat"] for seat in game["seats"]] == [0, 1]
    assert all(seat["latency_mean_ms"] is not None for seat in game["seats"])
    assert game["result"]["reason"] and game["duplicate"]["of"] == 2
    log = api_client.get(f"/api/games/{game_id}/log/").json()  # exactly the document
    assert log["format"] == "escoba-log/1"
    diagnostics = api_client.get(f"/api/games/{game_id}/diagnostics/").json()
    plays = [p for p in diagnostics["plays"] if p["move"] is not None]
    assert len(plays) == sum(len(r["plays"]) for r in log["rounds"])
    assert {p["round"] for p in plays} == set(range(1, len(log["rounds"]) + 1))
    assert diagnostics["duplicate"]["games"] == [g["id"] for g in matches["results"][0]["games"]]
    assert api_client.get("/api/matches/?league=abc").status_code == 400
    assert api_client.get("/api/games/99999999999999999999999/").status_code == 404
    assert api_client.get("/api/games/?league=-1").status_code == 400


def test_log_of_an_unplayed_game_is_404(
    user_client, make_bot, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    bots = [make_bot("greedy").id, make_bot("random").id]
    league_id = user_client.post(
        "/api/leagues/", {"name": "l", "bots": bots}, format="json"
    ).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):  # the schedule is written on commit
        user_client.post(f"/api/leagues/{league_id}/start/")
    game = Game.objects.filter(league_id=league_id).first()
    assert user_client.get(f"/api/games/{game.id}/log/").status_code == 404


def test_rankings_and_history(played_league, api_client):
    body = api_client.get("/api/rankings/?pool=classic/2p").json()
    assert body["count"] == 3
    assert all(isinstance(r["rating"], float) for r in body["results"])  # JSON numbers
    assert [r["rank"] for r in body["results"]] == [1, 2, 3]
    assert api_client.get("/api/rankings/").json()["count"] == 3
    assert api_client.get("/api/rankings/?pool=classic").status_code == 400
    assert api_client.get("/api/rankings/?pool=classic/3p").json()["count"] == 0
    bot_id = body["results"][0]["bot"]
    history = api_client.get(f"/api/rankings/history/?bot={bot_id}").json()
    # A point per fit that moved it: at most two fits per set, one when the set is recorded and
    # one when its luck correction arrives (docs/ratings.md), three sets in the league.
    assert 1 <= history["count"] <= 6
    # The last point is the published rating, up to a move too small to chart (a fit that moves
    # a rating less than HISTORY_MIN_CHANGE with its sets unchanged, as a luck correction may).
    last = Decimal(str(history["results"][-1]["rating"]))
    assert abs(last - Decimal(str(body["results"][0]["rating"]))) < HISTORY_MIN_CHANGE
    assert api_client.get("/api/rankings/history/").status_code == 400


def test_schema_generates(api_client):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert "/api/leagues/{id}/start/" in schema["paths"]
    assert "/api/games/{id}/log/" in schema["paths"]


def test_reads_cost_the_same_queries_however_many_games_and_load_no_logs(
    user_client, api_client, make_bot, django_capture_on_commit_callbacks
):
    """One query per bot or per game (an N+1) would grow with the league; a list or a rating
    history that loads each game's log (tens of KB) to show a number would be slow."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def league_of(count: int) -> int:
        bots = [make_bot(name) for name in ["greedy", "random", "expert", "random7"][:count]]
        league_id = user_client.post(
            "/api/leagues/", {"name": f"{count}", "bots": [b.id for b in bots]}, format="json"
        ).json()["id"]
        with django_capture_on_commit_callbacks(execute=True):  # played on commit
            assert user_client.post(f"/api/leagues/{league_id}/start/").status_code == 202
        return league_id

    def reads(league_id: int) -> dict[str, list[str]]:
        bot_id = League.objects.get(pk=league_id).bots.order_by("id").first().id
        paths = {
            "league": f"/api/leagues/{league_id}/",
            "crosstable": f"/api/leagues/{league_id}/crosstable/",
            "matches": f"/api/matches/?league={league_id}",
            "games": f"/api/games/?league={league_id}",
            "history": f"/api/rankings/history/?bot={bot_id}",
        }
        sql = {}
        for name, path in paths.items():
            with CaptureQueriesContext(connection) as queries:
                assert api_client.get(path).status_code == 200
            sql[name] = [query["sql"] for query in queries]
        return sql

    small, big = reads(league_of(2)), reads(league_of(4))  # 2 games, then 12

    for name in small:
        assert len(big[name]) == len(small[name]), name
        for column in ("log", "record"):  # read whole; one key of it (JSON_EXTRACT) is fine
            whole = re.compile(rf'"tournaments_game"\."{column}"(?!, \')')
            assert not [q for q in big[name] if whole.search(q)], (name, column)
        for column in ("document_gzip", "diagnostics_gzip"):  # only the log table's faults
            log_column = re.compile(rf'"tournaments_gamelog"\."{column}"')
            assert not [q for q in big[name] if log_column.search(q)], (name, column)


def test_game_list_and_detail_show_the_same_faults(played_league, api_client):
    game = Game.objects.filter(league=played_league).order_by("id").first()
    fault = {"seat": 1, "round": 2, "play": 3, "kind": "timeout", "detail": "no answer in 1000 ms"}
    GameLog.objects.filter(game=game).update(faults=[fault])

    listed = api_client.get(f"/api/games/?league={played_league.id}").json()["results"]
    detail = api_client.get(f"/api/games/{game.id}/").json()

    assert detail["faults"] == [fault]
    assert {g["id"]: g["faults"] for g in listed}[game.id] == [fault]
    assert all(g["faults"] == [] for g in listed if g["id"] != game.id)


@pytest.fixture
def duplicate_league(user, user_client, make_bot, django_capture_on_commit_callbacks):
    """A finished unrated league of one owner's three bots: its sets are duplicate sets (each
    set's games dealt the same cards, seats swapped), the only leagues that still share deals."""
    bots = [
        make_bot(name, owner=user, health="healthy") for name in ("greedy", "random", "random7")
    ]
    created = user_client.post(
        "/api/leagues/",
        {"name": "Own", "ruleset": {"name": "classic"}, "bots": [b.id for b in bots]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    league_id = created.json()["id"]
    with django_capture_on_commit_callbacks(execute=True):  # played on commit
        assert user_client.post(f"/api/leagues/{league_id}/start/").status_code == 202
    league = League.objects.get(pk=league_id)
    match = league.matches.order_by("number").first()
    assert len({game.seed for game in match.games.all()}) == 1  # one deal for the whole set
    return league


def test_a_set_in_play_keeps_its_deals_secret(duplicate_league, api_client, client):
    """The games of a duplicate set are dealt the same cards and played at the same time: while
    the set is in play its seed, its finished games' logs and diagnostics and their replays
    would show a bot its opponent's hand, so none is published until the whole set is over."""
    match = duplicate_league.matches.order_by("number").first()
    game, other = match.games.order_by("number")
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    Game.objects.filter(pk=other.pk).update(status=Game.Status.PENDING)  # still being played
    cache.clear()  # the cached reads were built when the set was over

    assert api_client.get(f"/api/matches/{match.id}/").json()["seed"] is None
    assert api_client.get(f"/api/games/{game.id}/").json()["duplicate"]["seed"] is None
    for part in ("log", "diagnostics"):
        answer = api_client.get(f"/api/games/{game.id}/{part}/")
        assert answer.status_code == 409, part
        body = answer.json()
        assert body == {"detail": SetInPlay.default_detail, "code": "set_in_play", "errors": {}}
    page = client.get(f"/games/{game.id}/").content.decode()
    assert 'data-testid="set-in-play"' in page and "replay-log" not in page

    Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
    Game.objects.filter(pk=other.pk).update(status=Game.Status.FINISHED)
    cache.clear()
    assert api_client.get(f"/api/matches/{match.id}/").json()["seed"] == match.seed
    assert api_client.get(f"/api/games/{game.id}/").json()["duplicate"]["seed"] == game.seed
    assert api_client.get(f"/api/games/{game.id}/log/").json()["format"] == "escoba-log/1"
    assert api_client.get(f"/api/games/{game.id}/diagnostics/").status_code == 200
    assert "replay-log" in client.get(f"/games/{game.id}/").content.decode()


def test_a_rated_set_in_play_names_nobody_even_in_its_finished_games(
    played_league, api_client, client
):
    """A rated set's games are dealt afresh, but they have the same opponents: a finished game's
    log, seats or replay would tell a bot whom the set's game still in play is against (and so
    whom to no-show), so a rated set's games show no bot and no log until the set is over."""
    match = played_league.matches.order_by("number").first()
    game, other = match.games.order_by("number")
    assert game.seed != other.seed  # rated play: every game its own deal
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    Game.objects.filter(pk=other.pk).update(status=Game.Status.PENDING)
    cache.clear()

    detail = api_client.get(f"/api/games/{game.id}/").json()
    assert [seat["bot"] for seat in detail["seats"]] == [None, None]
    answer = api_client.get(f"/api/games/{game.id}/log/")
    assert answer.status_code == 409 and answer.json()["code"] == "set_in_play"
    page = client.get(f"/games/{game.id}/").content.decode()
    assert 'data-testid="rated-set-in-play"' in page and "replay-log" not in page
    assert not any(f"/bots/{entry.bot_id}/" in page for entry in played_league.entries.all())

    Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
    Game.objects.filter(pk=other.pk).update(status=Game.Status.FINISHED)
    cache.clear()
    assert all(seat["bot"] for seat in api_client.get(f"/api/games/{game.id}/").json()["seats"])
    assert api_client.get(f"/api/games/{game.id}/log/").status_code == 200
    assert "replay-log" in client.get(f"/games/{game.id}/").content.decode()
