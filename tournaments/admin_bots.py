"""Admin pages for bots and their checks. Secrets never appear here, not even to staff.

Bots are registered through the API (their URL must be verified and the owner must see the
secret once), so the admin cannot add them or edit their URL; it can pause, resume and check.
"""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin_readonly import ReadOnlyInline
from tournaments.models import Bot, BotCheck, BotVersion
from tournaments.services.bots import bot_check, bot_pause, bot_resume


class BotCheckInline(ReadOnlyInline):
    model = BotCheck
    fields = ["created_at", "trigger", "passed", "latency_ms"]
    show_change_link = True
    ordering = ["-created_at", "-id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[BotCheck]:
        return super().get_queryset(request).defer("report")


class BotVersionInline(ReadOnlyInline):
    """The versions the bot announced; each has ratings of its own."""

    model = BotVersion
    fields = ["version", "first_seen_at", "last_seen_at"]


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = [
        "name", "owner", "status", "health", "protocol_version", "in_rated_play", "no_shows",
        "no_shows_in_row", "check_failures", "last_checked_at", "last_latency_ms", "created_at",
    ]  # fmt: skip
    list_filter = [
        "status",
        "health",
        ("rated_paused_at", admin.EmptyFieldListFilter),
        "created_at",
    ]
    search_fields = ["name", "owner__username", "url", "description"]
    list_select_related = ["owner"]
    ordering = ["name"]
    exclude = ["secret"]
    readonly_fields = [
        "owner", "url", "health", "check_failures", "last_checked_at", "last_latency_ms",
        "last_check_report", "protocol_name", "protocol_author", "protocol_version",
        "no_shows", "no_shows_in_row", "rated_paused_at", "rated_retry_at", "rated_rechecks",
        "created_at", "updated_at",
    ]  # fmt: skip
    inlines = [BotVersionInline, BotCheckInline]
    actions = ["run_check", "pause", "resume"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(boolean=True, description="rated play")
    def in_rated_play(self, bot: Bot) -> bool:
        """False while paused for no-shows (until a check passes)."""
        return bot.rated_paused_at is None

    @admin.action(description="Run the protocol check on the selected bots")
    def run_check(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            result = bot_check(bot=bot, trigger=BotCheck.Trigger.ADMIN)
            bot.refresh_from_db(fields=["health", "check_failures"])
            level = messages.SUCCESS if result.passed else messages.WARNING
            outcome = "passed" if result.passed else "failed"
            self.message_user(request, f"{bot}: check {outcome}, now {bot.health}.", level)

    @admin.action(description="Pause the selected bots")
    def pause(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            bot_pause(bot=bot)
        self.message_user(request, f"Paused {len(queryset)} bots.", messages.SUCCESS)

    @admin.action(description="Resume the selected bots")
    def resume(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            bot_resume(bot=bot)
        self.message_user(request, f"Resumed {len(queryset)} bots.", messages.SUCCESS)


@admin.register(BotCheck)
class BotCheckAdmin(admin.ModelAdmin):
    """Read-only history: a check is a record of what a bot did, not something to edit."""

    list_display = ["bot", "created_at", "trigger", "passed", "latency_ms"]
    list_filter = ["passed", "trigger", "created_at"]
    search_fields = ["bot__name"]
    list_select_related = ["bot"]
    readonly_fields = ["bot", "trigger", "passed", "latency_ms", "report", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: BotCheck | None = None) -> bool:
        return False
