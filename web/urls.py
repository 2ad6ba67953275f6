"""The browser pages, included at the site root by config/urls.py."""

from django.contrib.auth.views import LogoutView
from django.urls import path, register_converter

from web import auth_views, bot_checks, ladder_views, play_views, views
from web.throttling import AuthThrottle, BotCallsThrottle, SignupThrottle, throttled


class RowIdConverter:
    """``<int:...>`` would take digits of any length; this one only ``views.ROW_ID``."""

    regex = views.ROW_ID

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(RowIdConverter, "row_id")

urlpatterns = [
    path("", views.rankings, name="rankings"),
    path("leagues/", views.league_list, name="league_list"),
    path("leagues/new/", views.league_new, name="league_new"),
    path("leagues/<row_id:league_id>/", views.league_detail, name="league_detail"),
    path("leagues/<row_id:league_id>/start/", views.league_start_page, name="league_start"),
    path("leagues/<row_id:league_id>/live/", views.league_live, name="league_live"),
    path("leagues/<row_id:league_id>/games/", views.league_games, name="league_games"),
    path("bots/<row_id:bot_id>/", views.bot_detail, name="bot_detail"),
    path("games/<row_id:game_id>/", views.game_replay, name="game_replay"),
    path("play/<row_id:person_game_id>/", play_views.play_page, name="play"),
    path("play/<row_id:person_game_id>/live/", play_views.play_live, name="play_live"),
    path("bots/<row_id:bot_id>/play/", play_views.play_new, name="play_new"),
    path("ladder/", ladder_views.ladder, name="ladder"),
    path("ladder/live/", ladder_views.ladder_live, name="ladder_live"),
    path("bots/<row_id:bot_id>/challenge/", ladder_views.bot_challenge, name="bot_challenge"),
    path(
        "challenges/<row_id:challenge_id>/",
        ladder_views.challenge_detail,
        name="challenge_detail",
    ),
    path("tests/new/", ladder_views.version_test_new, name="version_test_new"),
    path("tests/<row_id:test_id>/", ladder_views.version_test_detail, name="version_test_detail"),
    # Registering a bot and checking it make us call its URL: the API's bot_calls limit.
    path("my/bots/", throttled(BotCallsThrottle)(views.my_bots), name="my_bots"),
    path(
        "my/bots/<row_id:bot_id>/check/",
        throttled(BotCallsThrottle)(bot_checks.my_bot_check),
        name="my_bot_check",
    ),
    path(
        "my/bots/<row_id:bot_id>/check/status/",
        bot_checks.my_bot_check_status,
        name="my_bot_check_status",
    ),
    path("my/tokens/", auth_views.my_tokens, name="my_tokens"),
    path("my/tokens/revoke-all/", auth_views.my_tokens_revoke_all, name="my_tokens_revoke_all"),
    path("my/tokens/<str:token_id>/revoke/", auth_views.my_token_revoke, name="my_token_revoke"),
    path("accounts/verify-email/<str:token>/", auth_views.verify_email, name="verify_email"),
    path("accounts/login/", throttled(AuthThrottle)(views.PageLoginView.as_view()), name="login"),
    path("accounts/logout/", LogoutView.as_view(next_page="rankings"), name="logout"),
    path("accounts/signup/", throttled(AuthThrottle, SignupThrottle)(views.signup), name="signup"),
    path("favicon.ico", views.favicon, name="favicon"),
]
