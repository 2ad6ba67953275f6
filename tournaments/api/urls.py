"""Routes under /api/. Each resource module adds its paths here."""

from django.urls import include, path, re_path

from tournaments.api import (
    accounts,
    bots,
    challenges,
    games,
    health,
    leagues,
    notifications,
    play,
    rankings,
    version_tests,
)
from tournaments.api.leagues import ID_PATTERN

app_name = "api"

urlpatterns = [
    path("auth/register/", accounts.RegisterView.as_view(), name="register"),
    path("auth/token/", accounts.TokenView.as_view(), name="token"),
    path("auth/me/", accounts.MeView.as_view(), name="me"),
    path("auth/tokens/", accounts.TokenListView.as_view(), name="tokens"),
    path(
        "auth/tokens/revoke-all/", accounts.TokenRevokeAllView.as_view(), name="tokens-revoke-all"
    ),
    path("auth/tokens/<str:token_id>/", accounts.TokenRevokeView.as_view(), name="token-revoke"),
    path("health/", health.HealthView.as_view(), name="health"),
    path("", include(bots.router.urls)),
    path("", include(leagues.router.urls)),
    path("", include(games.router.urls)),
    path("", include(challenges.router.urls)),
    path("", include(version_tests.router.urls)),
    path("", include(notifications.router.urls)),
    path(
        "notification-settings/",
        notifications.NotificationSettingsView.as_view(),
        name="notification-settings",
    ),
    path(
        "notification-settings/rotate-secret/",
        notifications.NotificationSecretView.as_view(),
        name="notification-settings-rotate-secret",
    ),
    path("play/", play.PlayCreateView.as_view(), name="play"),
    re_path(
        rf"^play/(?P<person_game_id>{ID_PATTERN})/$",
        play.PlayDetailView.as_view(),
        name="play-detail",
    ),
    re_path(
        rf"^play/(?P<person_game_id>{ID_PATTERN})/move/$",
        play.PlayMoveView.as_view(),
        name="play-move",
    ),
    path("rankings/", rankings.RankingListView.as_view(), name="rankings"),
    path("rankings/history/", rankings.RatingHistoryView.as_view(), name="rating-history"),
]
