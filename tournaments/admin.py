"""Admin pages for leagues, matches, games and ratings; bots are in ``admin_bots``.

Results and ratings are written only by the match service (one transaction per game), so the
admin shows them read-only; leagues can be paused, resumed or cancelled through the services.
"""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from tournaments import admin_bots  # noqa: F401  (registers Bot and BotCheck)
from tournaments.admin_readonly import ReadOnlyAdmin, ReadOnlyInline
from tournaments.messages import QUEUE_UNAVAILABLE
from tournaments.metrics import arena_figures, figures_rates
from tournaments.models import (
    Challenge,
    Game,
    League,
    LeagueEntry,
    Match,
    RatedSet,
    Rating,
    RatingFit,
    Seat,
    SetScore,
    VersionTest,
)
from tournaments.services.league_schedules import league_start
from tournaments.services.league_states import (
    QueueUnavailable,
    league_cancel,
    league_pause,
    league_resume,
)


class LeagueEntryInline(admin.TabularInline):
    model = LeagueEntry
    fields = ["bot", "created_at"]
    readonly_fields = ["created_at"]
    raw_id_fields = ["bot"]
    extra = 0


def _run_as_creator(service, verb: str):
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        for league in queryset:
            try:
                service(league_id=league.id, user=league.creator)
            except ValidationError as error:
                modeladmin.message_user(request, f"{league}: {error.messages[0]}", messages.ERROR)
            except QueueUnavailable:
                modeladmin.message_user(request, f"{league}: {QUEUE_UNAVAILABLE}", messages.ERROR)
            else:
                modeladmin.message_user(request, f"{league}: {verb}.")

    action.short_description = f"{verb.capitalize()} the selected leagues"
    action.__name__ = f"{verb}_leagues"
    return action


@admin.register(League)
class LeagueAdmin(admin.ModelAdmin):
    list_display = ["name", "creator", "status", "pool", "players", "rated", "kind", "created_at"]
    list_filter = ["status", "kind", "pool", "rated"]
    search_fields = ["name", "creator__username"]
    list_select_related = ["creator"]
    readonly_fields = ["status", "seed", "ruleset", "pool", "started_at", "finished_at"]
    raw_id_fields = ["creator"]
    inlines = [LeagueEntryInline]
    actions = [
        _run_as_creator(league_start, "started"),
        _run_as_creator(league_pause, "paused"),
        _run_as_creator(league_resume, "resumed"),
        _run_as_creator(league_cancel, "cancelled"),
    ]


@admin.display(description="replay")
def replay_link(game: Game) -> str:
    """A link to the game's page in the browser replay viewer."""
    return format_html('<a href="{}">replay</a>', reverse("game_replay", args=[game.pk]))


class GameInline(ReadOnlyInline):
    model = Game
    fields = [
        "number", "status", "seating", "winner", "totals", "reason", "moves", "faults", replay_link,
    ]  # fmt: skip
    show_change_link = True


@admin.register(Match)
class MatchAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "round", "status", "attempts", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["league__name"]
    list_select_related = ["league"]
    # The newest league's matches first, by the key's columns (no join to sort).
    ordering = ["-league_id", "number"]
    inlines = [GameInline]


class SeatInline(ReadOnlyInline):
    model = Seat
    fields = [
        "seat", "team", "bot", "moves", "faults", "no_show", "latency_mean_ms", "latency_max_ms",
    ]  # fmt: skip


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin):
    list_display = [
        "__str__", "status", "winner", "totals", "reason", "moves", "faults", "rated", replay_link,
    ]  # fmt: skip
    readonly_fields = [replay_link]
    list_filter = ["status", "reason", "rated", "seats__no_show"]
    search_fields = ["league__name"]
    list_select_related = ["match__league"]
    # The newest league's games first, in the order they were scheduled (no join to sort).
    ordering = ["-league_id", "match_id", "number"]
    inlines = [SeatInline]


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    """The published ratings of each pool's latest fit (written only by the fit)."""

    list_display = [
        "bot", "version", "pool", "rank", "rating", "rating_low", "rating_high", "provisional",
        "sets", "games", "los_next", "updated_at",
    ]  # fmt: skip
    list_filter = ["pool", "provisional"]
    search_fields = ["bot__name", "version__version"]
    list_select_related = ["bot", "version"]


class SetScoreInline(ReadOnlyInline):
    model = SetScore
    fields = ["player", "opponent", "twelfths"]


@admin.register(RatedSet)
class RatedSetAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "pool", "games", "created_at"]
    list_filter = ["pool"]
    search_fields = ["match__league__name"]
    list_select_related = ["match__league"]
    inlines = [SetScoreInline]


@admin.register(RatingFit)
class RatingFitAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "pool", "sets", "players", "iterations", "seconds", "created_at"]
    list_filter = ["pool"]


@admin.register(Challenge)
class ChallengeAdmin(ReadOnlyAdmin):
    list_display = ["id", "bot", "opponent", "sets", "creator", "league", "created_at"]
    search_fields = ["bot__name", "opponent__name", "creator__username"]
    list_select_related = ["bot", "opponent", "creator", "league"]


@admin.register(VersionTest)
class VersionTestAdmin(ReadOnlyAdmin):
    list_display = ["id", "candidate", "baseline", "status", "sets", "llr", "elo", "created_at"]
    list_filter = ["status"]
    search_fields = ["candidate__name", "baseline__name", "creator__username"]
    list_select_related = ["candidate", "baseline"]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms"


def arena_health(request: HttpRequest) -> TemplateResponse:
    """The *Arena health* page: the figures of ``/metrics`` for an operator without Prometheus
    (tournaments/metrics.py), with rates since an earlier view of this page."""
    figures = arena_figures()
    rates = figures_rates(figures)
    pools = []
    for name, pool in sorted(figures.pools.items()):
        pools.append(
            {
                "name": name,
                "games": pool.games,
                "moves": pool.moves,
                "games_per_s": None if rates is None else rates.games.get(name, 0.0),
                "moves_per_s": None if rates is None else rates.moves.get(name, 0.0),
                "faults": sum(pool.faults.values()),
                "fault_kinds": ", ".join(f"{k} {n}" for k, n in sorted(pool.faults.items())),
                "calls": pool.latency_count,
                "latency_mean": _ms(pool.latency_mean_ms),
                "latency_p50": _ms(pool.latency_quantile_ms(0.5)),
                "latency_p95": _ms(pool.latency_quantile_ms(0.95)),
                "in_flight": pool.matches_in_flight,
                "fit_lag_s": pool.fit_lag_s,
                "sets_unfitted": pool.sets_unfitted,
            }
        )
    ratio = figures.read_hit_ratio
    context = {
        **admin.site.each_context(request),
        "title": "Arena health",
        "figures": figures,
        "pools": pools,
        "rates": rates,
        "read_hit_percent": None if ratio is None else f"{100 * ratio:.1f} %",
    }
    return TemplateResponse(request, "admin/arena_health.html", context)
