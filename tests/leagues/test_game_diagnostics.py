"""A game's log, its diagnostics and its bots' private debug output, end to end.

A real league is played against a loopback bot that records every request body it receives and
answers each move with a `debug` text (some longer than 2 KB, one illegal move per game): the log
endpoint must serve exactly the escoba-log/1 document (the real `python -m games validate`
accepts it), gzip only to clients that accept it; `diagnostics/` must show the debug text and the
exact request body only to the bot's owner; the seats' stored figures must match the log.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest
from aiohttp import web
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.wire import DEBUG_MAX_BYTES
from tests.fakebots.loops import ServerThread
from tests.fakebots.simple import SimpleBot, not_in_hand
from tests.leagues.conftest import example_bot
from tests.performance.data import rows_made, rows_restore
from tournaments.api.games import accepts_gzip
from tournaments.latency import nearest_rank_percentile
from tournaments.models import Bot, Game, League, Seat
from tournaments.selectors.pages import bot_fault_counts, bot_latency_percentiles
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
ILLEGAL_AT = 3  # the debug bot's third move request of each game is answered with a bad card


def debug_text(body: dict) -> str:
    """What the debug bot says about a request: long (multi-byte, over 2 KB) every fourth play."""
    played = len(body["history"])
    text = f"round {body['round']}, {played} played, hand {' '.join(body['you']['hand'])}"
    return text + " ñ" * 1500 if played % 4 == 0 else text


class DebugBot:
    """Records each move request as received and answers with a debug text (a `SimpleBot`
    whose answers are made here)."""

    def __init__(self) -> None:
        self.received: dict[tuple[str, int, int], dict] = {}
        self.calls: Counter[str] = Counter()
        self.bot = SimpleBot(reply=self.answer)

    def app(self) -> web.Application:
        return self.bot.app()

    def answer(self, body: dict) -> tuple[int, bytes]:
        game = str(body["game"]["id"])
        self.calls[game] += 1
        self.received[(game, body["round"], len(body["history"]) + 1)] = body
        move = body["legal_moves"][0]
        if self.calls[game] == ILLEGAL_AT:
            move = {"card": not_in_hand(body)}
        return 200, orjson.dumps({**move, "debug": debug_text(body)})


@pytest.fixture(scope="module")
def debug_bot():
    thread = ServerThread()
    bot = DebugBot()
    port = thread.start_app(bot.app())
    yield bot, f"http://127.0.0.1:{port}/"
    thread.stop()


@pytest.fixture(scope="module")
def played_world(django_db_setup, django_db_blocker, example_servers, debug_bot):
    """The league ``world`` restores, played once for the module (tests/performance/data.py
    ``rows_made``): the debug bot's recorder keeps the requests of this one play."""
    recorder, url = debug_bot

    def play() -> dict:
        users = get_user_model().objects
        staff = users.create_user(username="staff", is_staff=True)
        owner, rival = users.create_user(username="owner"), users.create_user(username="rival")
        mine = Bot.objects.create(
            owner=owner, name="dbg", url=url, secret="whsec_" + "A" * 32, health="healthy"
        )
        theirs = example_bot(example_servers, "greedy", owner=rival, health="healthy")
        league = league_create(
            creator=staff,
            name="debug league",
            bot_ids=[mine.id, theirs.id],
            rated=True,
            move_timeout_ms=10_000,  # a loaded machine must not add timeouts to the planned fault
        )
        league_start(league_id=league.id, user=staff)  # eager Celery: plays on commit
        return {"league": league, "owner": owner, "rival": rival, "bot": mine}

    made, rows = rows_made(django_db_blocker, play)
    return {**made, "recorder": recorder}, rows


@pytest.fixture
def world(db, played_world):
    """A finished league: the debug bot (owned by ``owner``) against greedy (owned by someone
    else); returns the league, both owners and the debug bot."""
    made, rows = played_world
    rows_restore(rows)
    league = League.objects.get(pk=made["league"].pk)
    assert league.status == League.Status.FINISHED, list(
        league.matches.values_list("status", "attempts", "worker")
    ) + list(league.games.values_list("status", "reason"))
    return {**made, "league": league}


def client_of(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def games_of(world) -> list[Game]:
    return list(Game.objects.filter(league=world["league"]).order_by("id"))


def test_log_endpoint_serves_exactly_the_document_and_the_real_cli_validates_it(world, tmp_path):
    game = games_of(world)[0]
    response = client_of().get(f"/api/games/{game.id}/log/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert "Content-Encoding" not in response
    document = orjson.loads(response.content)
    assert document == game.log.document and document["format"] == "escoba-log/1"
    path = tmp_path / "game.json"
    path.write_bytes(response.content)
    checked = subprocess.run(
        [sys.executable, "-m", "games", "validate", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    "accept, compressed",
    [
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("*", True),
        ("", False),
        ("identity", False),
        ("gzip;q=0", False),
        ("br, *;q=0", False),
        ("*;q=1, gzip;q=0", False),
    ],
)
def test_gzip_only_when_accepted(accept, compressed):
    assert accepts_gzip(accept) is compressed


def test_log_is_sent_as_stored_gzip_when_accepted_and_decompressed_otherwise(world):
    game = games_of(world)[0]
    client = client_of()
    zipped = client.get(f"/api/games/{game.id}/log/", HTTP_ACCEPT_ENCODING="gzip, br")
    plain = client.get(f"/api/games/{game.id}/log/", HTTP_ACCEPT_ENCODING="gzip;q=0, br")
    assert zipped["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain
    for response in (zipped, plain):
        assert "Accept-Encoding" in response["Vary"]
    assert zipped.content == bytes(game.log.document_gzip)  # the stored bytes, not recompressed
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) * 3 < len(plain.content)


def test_log_of_unknown_and_unplayed_games_is_404(world):
    game = games_of(world)[0]
    game.log.delete()
    for path in (f"/api/games/{game.id}/log/", f"/api/games/{game.id}/diagnostics/"):
        response = client_of().get(path)
        assert response.status_code == 404 and response.json()["code"] == "not_found"
        assert "has not finished" in response.json()["detail"]
    assert client_of().get("/api/games/999999/diagnostics/").status_code == 404


def test_owner_sees_debug_and_the_exact_request_of_each_of_their_plays(world):
    recorder, bot = world["recorder"], world["bot"]
    truncated = 0
    for game in games_of(world):
        answer = client_of(world["owner"]).get(f"/api/games/{game.id}/diagnostics/").json()
        assert answer["game"] == game.id and answer["duplicate"]["match"] == game.match_id
        mine = [play for play in answer["plays"] if play["bot"] == bot.id]
        assert mine and all(play["mine"] for play in mine)
        for play in mine:
            sent = recorder.received[(str(game.id), play["round"], play["play"])]
            assert play["request"] == sent  # exactly the body the bot received
            assert play["request"]["you"]["seat"] == play["seat"]
            expected = debug_text(sent)
            if len(expected.encode()) > DEBUG_MAX_BYTES:
                truncated += 1
                assert play["debug_truncated"] and expected.startswith(play["debug"])
                assert DEBUG_MAX_BYTES - 1 <= len(play["debug"].encode()) <= DEBUG_MAX_BYTES
            else:
                assert play["debug"] == expected and not play["debug_truncated"]
        # a long debug never costs the move; the illegal one is a fault, its debug still kept
        faulted = [play for play in mine if play["fault"]]
        assert [play["fault"] for play in faulted] == ["illegal_move"]
        assert faulted[0]["debug"] and faulted[0]["move"] is not None
        assert sum(1 for f in answer["faults"] if f["seat"] == faulted[0]["seat"]) == 1
    assert truncated > 0


@pytest.mark.parametrize("viewer", ["anonymous", "rival"])
def test_no_one_else_sees_another_bots_debug_or_requests(world, viewer):
    user = world["rival"] if viewer == "rival" else None
    bot = world["bot"]
    for game in games_of(world):
        response = client_of(user).get(f"/api/games/{game.id}/diagnostics/")
        assert response.status_code == 200 and "private" in response["Cache-Control"]
        plays = response.json()["plays"]
        theirs = [play for play in plays if play["bot"] == bot.id]
        assert theirs and all(play["latency_ms"] is not None for play in theirs)
        for play in theirs:
            assert (play["mine"], play["debug"], play["request"]) == (False, None, None)
            assert play["debug_truncated"] is False
        # the rival sees their own bot's requests (greedy sends no debug)
        others = [play for play in plays if play["bot"] != bot.id]
        assert all((play["request"] is not None) == (viewer == "rival") for play in others)


def test_replay_page_shows_debug_to_the_owner_only(world, client):
    game = games_of(world)[0]
    received = world["recorder"].received
    secret = next(debug_text(body) for key, body in received.items() if key[0] == str(game.id))

    def page(user):
        client.logout()
        if user is not None:
            client.force_login(user)
        response = client.get(f"/games/{game.id}/")
        assert response.status_code == 200
        return response

    owner_page = page(world["owner"])
    assert 'id="replay-own-plays"' in owner_page.text and secret[:40] in owner_page.text
    assert "no-store" in owner_page["Cache-Control"]
    assert secret[:40] not in page(None).text and 'id="replay-own-plays"' not in page(None).text
    rival_page = page(world["rival"]).text  # the rival sees their own bot's plays, not ours
    assert 'id="replay-own-plays"' in rival_page and secret[:40] not in rival_page


def test_replay_page_embeds_the_log_with_each_plays_public_figures(world, client):
    """The viewer draws from the page's embedded log: the document, per play its seat, latency
    and fault as the diagnostics hold them (a forfeit's call made no play: no row), and the
    faults; none of the owner-only text."""
    for game in games_of(world):
        log = game.log
        page = client.get(f"/games/{game.id}/").text
        embedded = re.search(
            r'<script id="replay-log" type="application/json">(.*?)</script>', page, re.S
        )
        expected_meta = [[] for _ in log.document["rounds"]]
        for row in log.diagnostics:
            if row["move"] is not None:
                expected_meta[row["round"] - 1].append(
                    {key: row.get(key) for key in ("seat", "latency_ms", "fault", "detail")}
                )
        assert orjson.loads(embedded.group(1)) == {
            **log.document,
            "meta": expected_meta,
            "faults": log.faults,
        }
        assert any(row["fault"] for round_meta in expected_meta for row in round_meta)
        assert "debug" not in embedded.group(1) and '"request"' not in embedded.group(1)


def test_seat_figures_match_the_log_and_feed_the_profile(world):
    bot = world["bot"]
    latencies: dict[int, list[float]] = defaultdict(list)
    kinds_of_bot: Counter[str] = Counter()
    for game in games_of(world):
        log = game.log
        plays_by_seat = Counter(
            play["seat"] for round_log in log.document["rounds"] for play in round_log["plays"]
        )
        rows = [row for row in log.diagnostics if row["move"] is not None]
        for seat in Seat.objects.filter(game=game):
            mine = sorted(row["latency_ms"] for row in rows if row["seat"] == seat.seat)
            assert seat.moves == plays_by_seat[seat.seat] == len(mine)
            assert seat.latency_p50_ms == nearest_rank_percentile(mine, 50)
            assert seat.latency_p95_ms == nearest_rank_percentile(mine, 95)
            assert seat.latency_max_ms == mine[-1]
            kinds = Counter(f["kind"] for f in log.faults if f["seat"] == seat.seat)
            assert seat.fault_kinds == dict(kinds) and seat.faults == sum(kinds.values())
            if seat.bot_id == bot.id:
                latencies[game.id] = mine
                kinds_of_bot.update(kinds)
    profile = {row["label"]: row["ms"] for row in bot_latency_percentiles(bot=bot)}
    assert profile["max"] == max(values[-1] for values in latencies.values())
    assert profile["p50"] in {nearest_rank_percentile(v, 50) for v in latencies.values()}
    assert kinds_of_bot["illegal_move"] == len(latencies)  # one planned fault per game
    assert bot_fault_counts(bot=bot) == [
        {"kind": kind, "count": count} for kind, count in kinds_of_bot.most_common()
    ]
