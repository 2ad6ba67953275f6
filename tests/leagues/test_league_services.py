"""League life cycle, match play, ratings and standings, with the database and real loopback bots.

Celery runs eagerly here (test settings), so starting a league plays it inside the test once the
start transaction commits.
"""

import itertools
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import F
from django.utils import timezone

from tests.performance.data import head_to_head_counted
from tournaments import queueing
from tournaments.models import Bot, Game, GameLog, League, Match, RatedSet, Rating, Seat, SetScore
from tournaments.selectors.leagues import (
    league_crosstable,
    league_progress,
    league_standings,
)
from tournaments.selectors.pages import bot_head_to_head
from tournaments.selectors.ratings import bot_rating_history, ranking
from tournaments.services.league_creation import (
    ERROR_ALREADY_ENTERED,
    ERROR_NOT_BOT_OWNER,
    league_create,
    league_enrol,
)
from tournaments.services.league_schedules import league_start
from tournaments.services.league_states import (
    ERROR_NOT_CREATOR,
    league_cancel,
    league_pause,
    league_resume,
)
from tournaments.services.match_leases import LEASE_S
from tournaments.services.matches import match_play
from tournaments.services.rating_fits import HISTORY_MIN_CHANGE, ratings_recompute

pytestmark = pytest.mark.django_db(transaction=True)


_numbers = itertools.count(1)


def _create(user, bots, **options):
    """A league with a name of its own (league names are unique)."""
    name = f"test league {next(_numbers)}"
    return league_create(creator=user, name=name, bot_ids=[b.id for b in bots], **options)


@pytest.mark.django_db  # nothing is played: no commit to wait for
def test_create_validates_every_field(user):
    with pytest.raises(ValidationError) as caught:
        league_create(
            creator=user,
            name="bad",
            players=2,
            games_per_pairing=3,
            move_timeout_ms=1,
            max_faults=-1,
        )
    assert set(caught.value.message_dict) == {"games_per_pairing", "move_timeout_ms", "max_faults"}


@pytest.mark.django_db  # nothing is played: no commit to wait for
def test_create_reports_ruleset_problems_and_unknown_bots(user):
    with pytest.raises(ValidationError) as caught:
        league_create(creator=user, name="x", ruleset_name="nope")
    assert "ruleset" in caught.value.message_dict
    with pytest.raises(ValidationError) as caught:
        league_create(creator=user, name="x", ruleset_options={"players": 3})
    assert "ruleset" in caught.value.message_dict
    with pytest.raises(ValidationError) as caught:
        league_create(creator=user, name="x", bot_ids=[999999])
    assert "999999" in caught.value.message_dict["bots"][0]


@pytest.mark.django_db  # nothing is played: no commit to wait for
def test_create_resolves_ruleset_and_pool(user, make_bot):
    league = _create(user, [make_bot("greedy"), make_bot("random")], players=4)
    assert league.pool == "classic/4p"
    assert league.ruleset["options"]["teams"] is True
    assert league.games_per_pairing == 2
    three = _create(user, [], players=3)
    assert three.games_per_pairing == 3


@pytest.mark.django_db  # nothing is played: no commit to wait for
def test_only_owners_enrol_their_own_bots_and_only_while_open(user, make_bot):
    league = _create(user, [])
    mine = make_bot("greedy", owner=user)
    theirs = make_bot("random")
    league_enrol(league_id=league.id, bot_id=mine.id, user=user)
    with pytest.raises(ValidationError, match=ERROR_ALREADY_ENTERED):
        league_enrol(league_id=league.id, bot_id=mine.id, user=user)
    with pytest.raises(PermissionDenied, match=ERROR_NOT_BOT_OWNER):
        league_enrol(league_id=league.id, bot_id=theirs.id, user=user)
    league_enrol(league_id=league.id, bot_id=theirs.id, user=theirs.owner)
    league.status = League.Status.RUNNING
    league.save()
    other = make_bot("expert", owner=user)
    with pytest.raises(ValidationError):
        league_enrol(league_id=league.id, bot_id=other.id, user=user)


@pytest.mark.django_db  # nothing is played: no commit to wait for
def test_only_the_creator_starts_and_too_few_bots_cannot_start(user, make_bot):
    bot = make_bot("greedy")
    league = _create(user, [bot])
    with pytest.raises(PermissionDenied, match=ERROR_NOT_CREATOR):
        league_start(league_id=league.id, user=bot.owner)
    with pytest.raises(ValidationError) as caught:
        league_start(league_id=league.id, user=user)
    assert "bots" in caught.value.message_dict


def _rated(staff, bots, **options):
    name = f"rated league {next(_numbers)}"  # league names are unique
    return league_create(
        creator=staff, name=name, bot_ids=[b.id for b in bots], rated=True, **options
    )


def test_two_player_league_plays_to_the_end_with_logs_ratings_and_standings(staff, make_rated_bot):
    bots = [make_rated_bot("greedy"), make_rated_bot("random"), make_rated_bot("expert")]
    league = _rated(staff, bots)
    user = staff
    league_start(league_id=league.id, user=user)  # eager Celery: plays on commit

    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    assert league_progress(league) == {"done": 6, "total": 6, "aborted": 0, "faults": 0}
    assert Match.objects.filter(league=league, status=Match.Status.FINISHED).count() == 3
    for game in Game.objects.filter(league=league):
        assert game.status == Game.Status.FINISHED and game.rated
        assert game.log.document["format"] == "escoba-log/1"
        assert game.log.document["seed"] == game.seed
        assert game.moves == sum(len(r["plays"]) for r in game.log.document["rounds"])
        assert len(game.log.meta) == len(game.log.document["rounds"])
        assert game.match.rated_set.scores.count() == 1  # one pair, one score per set
    # rated play is dealt afresh: the two games of a set swap seats on deals of their own
    first, second = Game.objects.filter(league=league, match__number=1).order_by("number")
    assert first.seating == second.seating[::-1]
    assert first.seed != second.seed
    assert first.log.document["rounds"][0]["deals"] != second.log.document["rounds"][0]["deals"]
    seats = Seat.objects.filter(game=first).order_by("seat")
    assert [s.bot_id for s in seats] == first.seating
    assert all(s.moves > 0 and s.latency_mean_ms is not None for s in seats)

    standings = league_standings(league)
    assert [row["games"] for row in standings] == [4, 4, 4]
    assert sum(row["points"] for row in standings) == 6
    assert sum(row["sets_won"] + row["sets_drawn"] + row["sets_lost"] for row in standings) == 6
    assert standings[0]["points"] >= standings[-1]["points"]
    assert all(isinstance(row["rating"], float) for row in standings)
    assert "elo" not in standings[0]  # the league's results, never a second Elo
    # the anchor: the pool's ratings average 1500 (each rounded to the cent)
    total = sum(Rating.objects.filter(pool="classic/2p").values_list("rating", flat=True))
    assert abs(float(total) - 4500) <= 0.02
    table = league_crosstable(league)
    assert [cell is None for cell in table["rows"][0]["cells"]].count(True) == 1
    for row in table["rows"]:
        assert sum(cell["games"] for cell in row["cells"] if cell) == 4
    ranked = list(ranking("classic/2p"))
    assert [r.rank for r in ranked] == [1, 2, 3]
    assert ranked[0].rating >= ranked[-1].rating or ranked[-1].provisional > ranked[0].provisional
    history = list(bot_rating_history(bots[0]))
    # at most one point per fit, two fits per set at most: its raw score, then its correction
    assert 1 <= len(history) <= 6
    # a point is kept when a fit moves the rating by HISTORY_MIN_CHANGE or more (a correction
    # of a set for its luck may move it less)
    assert abs(history[-1].rating - Rating.objects.get(bot=bots[0]).rating) < HISTORY_MIN_CHANGE


def test_replaying_a_finished_match_changes_nothing(staff, make_rated_bot):
    league = _rated(staff, [make_rated_bot("greedy"), make_rated_bot("random")])
    league_start(league_id=league.id, user=staff)
    match = Match.objects.get(league=league)
    changes = list(SetScore.objects.values_list("id", "twelfths"))
    ratings = list(Rating.objects.values_list("id", "rating", "fit_id"))
    assert len(changes) == 1 and len(ratings) == 2
    assert match_play(match_id=match.id).status == "skipped"
    assert list(SetScore.objects.values_list("id", "twelfths")) == changes
    assert list(Rating.objects.values_list("id", "rating", "fit_id")) == ratings


def test_half_played_match_replays_only_unfinished_games(staff, make_rated_bot, monkeypatch):
    user = staff
    league = _rated(staff, [make_rated_bot("greedy"), make_rated_bot("random")])
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    league_start(league_id=league.id, user=user)
    match = Match.objects.get(league=league)
    match_play(match_id=match.id)
    finished = Game.objects.get(match=match, number=1)
    kept = (finished.finished_at, finished.log)
    # as if the worker died after storing game 1: game 2 pending, match still running (so its
    # set was not recorded yet)
    Game.objects.filter(match=match, number=2).update(status=Game.Status.PENDING, rated=False)
    RatedSet.objects.filter(match=match).delete()
    GameLog.objects.filter(game__match=match, game__number=2).delete()
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, claim="dead-run")
    League.objects.filter(pk=league.pk).update(status=League.Status.RUNNING)
    # while its run's lease looks alive, another delivery leaves the match alone
    assert match_play(match_id=match.id).status == "skipped"
    stale = timezone.now() - timedelta(seconds=LEASE_S + 1)
    Match.objects.filter(pk=match.pk).update(heartbeat_at=stale)

    outcome = match_play(match_id=match.id)

    assert (outcome.played, outcome.stored) == (1, 1)
    finished.refresh_from_db()
    assert (finished.finished_at, finished.log) == kept
    assert RatedSet.objects.filter(match=match).count() == 1
    assert Game.objects.filter(match=match, rated=True).count() == 2
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 2


def test_pause_holds_matches_and_resume_finishes_the_league(user, make_bot, monkeypatch):
    enqueued = []
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", enqueued.extend)
    league = _create(user, [make_bot("greedy"), make_bot("random"), make_bot("expert")])
    league_start(league_id=league.id, user=user)
    league_pause(league_id=league.id, user=user)
    assert match_play(match_id=enqueued[0]).status == "skipped"
    assert Match.objects.get(pk=enqueued[0]).status == Match.Status.PENDING

    monkeypatch.undo()
    league_resume(league_id=league.id, user=user)  # eager: plays the pending matches

    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    assert league_progress(league)["done"] == 6


def test_cancel_drops_pending_matches(user, make_bot, monkeypatch):
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    league = _create(user, [make_bot("greedy"), make_bot("random"), make_bot("expert")])
    league_start(league_id=league.id, user=user)
    league_cancel(league_id=league.id, user=user)
    assert set(Match.objects.filter(league=league).values_list("status", flat=True)) == {
        Match.Status.CANCELLED
    }
    with pytest.raises(ValidationError):
        league_resume(league_id=league.id, user=user)


def test_three_player_and_partnership_leagues(staff, make_rated_bot):
    user, make_bot = staff, make_rated_bot
    trio = _rated(user, [make_bot("greedy"), make_bot("random"), make_bot("expert")], players=3)
    league_start(league_id=trio.id, user=user)
    trio.refresh_from_db()
    assert trio.status == League.Status.FINISHED
    games = list(Game.objects.filter(league=trio))
    assert len(games) == 3 and all(len(g.seating) == 3 for g in games)
    assert all(g.rated for g in games)
    assert SetScore.objects.filter(rated_set__match__league=trio).count() == 3  # every pair

    # Rated partnerships: four bots of four owners, partners rotating, rated one by one.
    four = [make_bot(example) for example in ("greedy", "random", "expert", "random7")]
    pairs = _rated(user, four, players=4)
    league_start(league_id=pairs.id, user=user)
    game = Game.objects.filter(league=pairs).first()
    assert len(set(game.seating)) == 4 and len(game.log.document["seats"]) == 4
    assert SetScore.objects.filter(rated_set__match__league=pairs).count() == 6
    assert Rating.objects.filter(pool="classic/4p").count() == 4
    standings = league_standings(pairs)
    assert [row["games"] for row in standings] == [3, 3, 3, 3]
    # each game stored added to its bots' head-to-head totals: against every seat of another
    # team, a partner never counted, a partnership game once per opponent
    for bot in Bot.objects.filter(seats__game__league__in=[trio, pairs]).distinct():
        rows = bot_head_to_head(bot=bot)
        assert rows, bot
        got = {r["bot_id"]: [r["games"], r["wins"], r["draws"], r["losses"]] for r in rows}
        assert got == head_to_head_counted(bot)


def test_unrated_league_leaves_ratings_alone(user, make_bot):
    league = _create(user, [make_bot("greedy"), make_bot("random")], rated=False)
    league_start(league_id=league.id, user=user)
    assert not RatedSet.objects.exists() and not Rating.objects.exists()
    assert not Game.objects.filter(rated=True).exists()
    assert all(row["rating"] is None for row in league_standings(league))


def test_ratings_recompute_reproduces_stored_ratings_exactly(staff, make_rated_bot):
    bots = [make_rated_bot("greedy"), make_rated_bot("random"), make_rated_bot("random7")]
    league_start(league_id=_rated(staff, bots).id, user=staff)
    league_start(league_id=_rated(staff, bots[:2]).id, user=staff)
    report = ratings_recompute()
    assert report.exact and report.sets == 4 and report.ratings == 3

    Rating.objects.filter(bot=bots[0]).update(rating=F("rating") + Decimal("0.01"))
    report = ratings_recompute(write=True)
    assert len(report.mismatches) == 1
    assert ratings_recompute().exact


def test_bot_faults_forfeit_games_but_never_fail_the_match(user, make_bot):
    # the user's own bots: a league enters them on any terms (another user's, only on rated
    # play's, docs/ratings.md)
    dead = make_bot("greedy", name="dead", owner=user)
    dead.url = "http://127.0.0.1:9/"  # nothing listens on the discard port
    dead.save()
    bots = [make_bot("random", owner=user), dead]
    league = _create(user, bots, max_faults=0, move_timeout_ms=200)
    league_start(league_id=league.id, user=user)

    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    games = list(Game.objects.filter(league=league))
    assert all(g.reason == "forfeit" and g.faults == 1 for g in games)
    assert all(g.seating[g.forfeit] == dead.id for g in games)
    standings = {row["bot"]: row for row in league_standings(league)}
    assert standings["dead"]["faults"] == 2 and standings["dead"]["losses"] == 2
    assert league_progress(league)["faults"] == 2
    # it never answered: a no-show, recorded on its seats, charged to it alone
    assert set(Seat.objects.filter(no_show=True).values_list("bot_id", flat=True)) == {dead.id}
    dead.refresh_from_db()
    # an unrated league: only rated games count no-shows against a bot (docs/ratings.md)
    assert (dead.no_shows, dead.no_shows_in_row, dead.rated_paused_at) == (0, 0, None)


def test_play_match_retries_infrastructure_errors_only(monkeypatch):
    from celery.exceptions import Retry
    from django.db import OperationalError

    from tournaments import tasks

    def locked(*, match_id, worker, claim, from_queue):
        raise OperationalError("database is locked")

    def broken(*, match_id, worker, claim, from_queue):
        raise ValueError("a defect, not the infrastructure")

    monkeypatch.setattr(tasks, "match_play", locked)
    with pytest.raises(Retry):  # eager Celery raises the retry it would schedule
        tasks.play_match.delay(7)
    monkeypatch.setattr(tasks, "match_play", broken)
    with pytest.raises(ValueError):
        tasks.play_match.delay(8)
