"""The browser pages, included at the site root by config/urls.py."""

from django.contrib.auth.views import LogoutView
from django.urls import path, register_converter

from tournaments import ladder_pages, pages


class RowIdConverter:
    """``<int:...>`` would take digits of any length; this one only ``pages.ROW_ID``."""

    regex = pages.ROW_ID

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(RowIdConverter, "row_id")

urlpatterns = [
    path("", pages.rankings, name="rankings"),
    path("leagues/", pages.league_list, name="league_list"),
    path("leagues/<row_id:league_id>/", pages.league_detail, name="league_detail"),
    path("leagues/<row_id:league_id>/live/", pages.league_live, name="league_live"),
    path("leagues/<row_id:league_id>/games/", pages.league_games, name="league_games"),
    path("bots/<row_id:bot_id>/", pages.bot_detail, name="bot_detail"),
    path("games/<row_id:game_id>/", pages.game_replay, name="game_replay"),
    path("ladder/", ladder_pages.ladder, name="ladder"),
    path("bots/<row_id:bot_id>/challenge/", ladder_pages.bot_challenge, name="bot_challenge"),
    path(
        "challenges/<row_id:challenge_id>/",
        ladder_pages.challenge_detail,
        name="challenge_detail",
    ),
    path("tests/new/", ladder_pages.version_test_new, name="version_test_new"),
    path("tests/<row_id:test_id>/", ladder_pages.version_test_detail, name="version_test_detail"),
    path("my/bots/", pages.my_bots, name="my_bots"),
    path("my/bots/<row_id:bot_id>/check/", pages.my_bot_check, name="my_bot_check"),
    path("accounts/login/", pages.PageLoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(next_page="rankings"), name="logout"),
    path("accounts/signup/", pages.signup, name="signup"),
]
