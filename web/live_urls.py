"""The live streams (web/game_streams.py, web/page_streams.py), included under /live/ by
config/urls.py. They are event streams, not pages, so they stay out of web/urls.py (whose every
address is a page)."""

from django.urls import path

from web import game_streams, page_streams
from web.urls import RowIdConverter  # noqa: F401  (registers the row_id converter)

urlpatterns = [
    path("games/<row_id:game_id>/", game_streams.game_events, name="live_game"),
    path("<slug:topic>/<row_id:key>/", page_streams.topic_events, name="live_topic"),
]
