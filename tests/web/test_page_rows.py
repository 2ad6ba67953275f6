"""The pages' plain-row reads (tournaments/selectors/pages.py) say exactly what the reads of
model instances they replace say: the same rankings, ratings, latency, faults and games."""

import pytest
from django.utils import timezone

from tests.performance.data import fill_database
from tournaments.models import Bot, Challenge, League, Seat, VersionTest
from tournaments.selectors import ladder as ladder_selectors
from tournaments.selectors import pages
from tournaments.selectors import ratings as rating_selectors
from tournaments.services.bot_versions import bot_version_observe
from web.templatetags.matchups import matchup, teams_label

pytestmark = pytest.mark.django_db

POOL = "classic/2p"


@pytest.fixture
def filled():
    return fill_database(games=24, bots=5)


def test_ranking_rows_are_the_published_ratings_with_their_bots(filled):
    Bot.objects.filter(pk=filled.bots[0]).update(
        no_shows=4, no_shows_in_row=3, rated_paused_at=timezone.now()
    )
    Bot.objects.filter(pk=filled.bots[1]).update(no_shows=1)
    rows = rating_selectors.ranking_rows(pool=POOL)
    assert len(rows) == 5
    assert any(row["rated_paused"] for row in rows)
    ratings = {r.bot_id: r for r in rating_selectors.ranking(POOL).select_related("bot__owner")}
    for row in rows:
        rating = ratings[row["bot_id"]]
        bot = rating.bot
        expected = rating_selectors.rating_row(rating)
        del expected["updated_at"]  # no page shows it
        assert {key: row[key] for key in expected} == expected
        assert row["owner"] == bot.owner.username
        assert row["interval"] == (expected["rating_high"] - expected["rating_low"]) / 2
        assert (row["no_shows"], row["no_shows_in_row"]) == (bot.no_shows, bot.no_shows_in_row)
        assert row["rated_paused"] == (bot.rated_paused_at is not None)


def _shown(rating) -> dict:
    """What a bot's page shows of a rating, from a ``Rating`` or a ``rating_row`` dict."""
    names = ("pool", "rating", "rating_low", "rating_high", "provisional", "sets")
    if isinstance(rating, dict):
        return {name: rating[name] for name in names}
    return {name: getattr(rating, name) for name in names} | {
        name: float(getattr(rating, name)) for name in ("rating", "rating_low", "rating_high")
    }


def test_a_bots_rating_figures_are_those_of_the_ratings_selectors(filled):
    bot = Bot.objects.get(pk=filled.bots[0])
    # a newer version without a rated set: listed first, with no ratings, and now the current one
    bot.protocol_version = "2.0"
    bot.save(update_fields=["protocol_version"])
    bot_version_observe(bot=bot)
    figures = pages.bot_rating_figures(bot=bot)
    assert figures["pools"] == rating_selectors.bot_pools(bot) == [POOL]
    assert figures["current"] == [] == list(rating_selectors.bot_current_ratings(bot))
    versions = rating_selectors.bot_versions(bot)
    assert len(versions) == 2
    assert [{**v, "ratings": [_shown(r) for r in v["ratings"]]} for v in figures["versions"]] == [
        {
            "version": v["version"],
            "current": v["current"],
            "first_seen_at": v["first_seen_at"],
            "ratings": [_shown(r) for r in v["ratings"]],
        }
        for v in versions
    ]
    other = Bot.objects.get(pk=filled.bots[1])
    current = pages.bot_rating_figures(bot=other)["current"]
    assert current and [_shown(r) for r in current] == [
        _shown(r) for r in rating_selectors.bot_current_ratings(other)
    ]
    assert current[0]["rank"] == rating_selectors.bot_current_ratings(other)[0].rank


def test_latency_and_faults_read_together_are_those_read_apart(filled, monkeypatch):
    bot = Bot.objects.get(pk=filled.bots[0])
    seats = list(Seat.objects.filter(bot=bot).order_by("-finished_at", "-game_id"))
    assert len(seats) > 6
    for n, seat in enumerate(seats):
        seat.moves, seat.latency_mean_ms = 10 + n, 2.0 + n
        seat.latency_p50_ms, seat.latency_p95_ms, seat.latency_max_ms = 1.0 + n, 5.0 + n, 9.0 + n
        seat.fault_kinds = {"timeout": 1} if n % 3 == 0 else {}
    # a no-show among the latest: no latency figures, so older seats stand in for it
    seats[1].moves, seats[1].latency_p50_ms = 0, None
    seats[2].fault_kinds = {"illegal_move": 2}
    Seat.objects.bulk_update(
        seats,
        ["moves", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms",
         "fault_kinds"],
    )  # fmt: skip
    for recent in (5, 100):
        monkeypatch.setattr(pages, "RECENT_GAMES", recent)
        latency, faults = pages.bot_latency_and_faults(bot=bot)
        assert latency == pages.bot_latency_percentiles(bot=bot) != []
        assert faults == pages.bot_fault_counts(bot=bot) != []


def test_recent_game_rows_are_the_games_the_querysets_list(filled):
    bot = Bot.objects.get(pk=filled.bots[0])
    games = list(pages.bot_recent_games(bot=bot, limit=7))
    rows = pages.bot_recent_game_rows(bot=bot, limit=7)
    assert [row["id"] for row in rows] == [game.pk for game in games]
    assert [teams_label(row["seats"]) for row in rows] == [matchup(game) for game in games]
    assert [(r["totals"], r["league_id"], r["league_name"]) for r in rows] == [
        (game.totals, game.league_id, game.league.name) for game in games
    ]
    league = League.objects.get(pk=filled.leagues[0])
    recent = pages.league_recent_games(league=league, limit=5)
    played = list(league.games.filter(status="finished").order_by("-finished_at", "-id")[:5])
    assert [row["id"] for row in recent] == [game.pk for game in played]
    assert [teams_label(row["seats"]) for row in recent] == [matchup(game) for game in played]


def _as_shown(instance, keys: tuple[str, ...]) -> dict:
    """What a template reads of ``instance`` at each key (dotted: a related row's field)."""
    row: dict = {}
    for key in keys:
        *related, name = key.split(".")
        target, value = row, instance
        for part in related:
            target, value = target.setdefault(part, {}), getattr(value, part)
        target[name] = getattr(value, name)
    return row


def test_challenge_and_version_test_rows_are_what_the_instances_show(filled):
    bot, other = (Bot.objects.get(pk=pk) for pk in filled.bots[:2])
    first, second = (League.objects.get(pk=pk) for pk in filled.leagues[:2])
    Challenge.objects.create(creator=bot.owner, bot=other, opponent=bot, sets=3, league=first)
    VersionTest.objects.create(
        creator=bot.owner, candidate=bot, baseline=other, elo0=0, elo1=10, alpha=0.05,
        beta=0.05, max_sets=100, league=second, sets=7, series=[[1, 0.5]] * 50,
    )  # fmt: skip
    challenges = list(ladder_selectors.bot_challenges(bot))
    assert len(challenges) == 1
    keys = ("pk", "sets", "created_at", "bot.name", "opponent.name", "league.status")
    assert pages.bot_challenge_rows(bot=bot) == [_as_shown(c, keys) for c in challenges]
    tests = list(ladder_selectors.bot_version_tests(bot))
    assert len(tests) == 1
    keys = ("pk", "status", "sets", "candidate.name", "baseline.name")
    assert pages.bot_version_test_rows(bot=bot) == [_as_shown(t, keys) for t in tests]
    assert pages.bot_version_test_rows(bot=Bot.objects.get(pk=filled.bots[2])) == []
