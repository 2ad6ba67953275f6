"""The browser pages, included at the site root by config/urls.py."""

from django.contrib.auth.views import LogoutView
from django.urls import path

from tournaments import pages

urlpatterns = [
    path("", pages.rankings, name="rankings"),
    path("leagues/", pages.league_list, name="league_list"),
    path("leagues/<int:league_id>/", pages.league_detail, name="league_detail"),
    path("leagues/<int:league_id>/live/", pages.league_live, name="league_live"),
    path("leagues/<int:league_id>/games/", pages.league_games, name="league_games"),
    path("bots/<int:bot_id>/", pages.bot_detail, name="bot_detail"),
    path("games/<int:game_id>/", pages.game_replay, name="game_replay"),
    path("my/bots/", pages.my_bots, name="my_bots"),
    path("my/bots/<int:bot_id>/check/", pages.my_bot_check, name="my_bot_check"),
    path("accounts/login/", pages.PageLoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(next_page="rankings"), name="logout"),
    path("accounts/signup/", pages.signup, name="signup"),
]
