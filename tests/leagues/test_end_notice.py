"""A bot's end notice carries the link to the game's log on this service."""

from bots_sdk import Bot as SdkBot
from bots_sdk import serve_in_thread
from bots_sdk.examples import greedy
from tournaments.models import Bot, Game
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import match_play


def test_end_notices_link_to_the_game_log(user, make_bot, settings):
    settings.ESCOBA_PUBLIC_URL = "https://arena.example/"
    ends = []
    listener = SdkBot(greedy.choose, name="listener", on_end=ends.append)
    with serve_in_thread(listener) as server:
        mine = Bot.objects.create(owner=user, name="listener", url=server.url, secret="")
        league = league_create(creator=user, name="links", bot_ids=[mine.id, make_bot("random").id])
        league_start(league_id=league.id, user=user, enqueue=False)
        match = league.matches.get()
        match_play(match_id=match.id)

    games = Game.objects.filter(match=match).order_by("id")
    assert sorted(end["log_url"] for end in ends) == [
        f"https://arena.example/api/games/{game.id}/log/" for game in games
    ]
