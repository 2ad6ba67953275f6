"""What the tests of people's games share: a game played out with legal moves, shorter games,
and a test database that does not wait for the disk."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def play_out(client, play_id: int, choose=lambda legal: legal[-1], limit_s: float = 300) -> dict:
    """Answer every move request with a legal move until the game is over; the last state.

    Each move's answer is the state after it (``POST .../move/`` answers as ``GET`` does), so
    the game is read again only while the bots are to move."""
    deadline = time.monotonic() + limit_s
    state = None
    while time.monotonic() < deadline:
        if state is None:
            read = client.get(f"/api/play/{play_id}/")
            if read.status_code == 429:  # the API's throttle: a polite client waits as told
                time.sleep(float(read["Retry-After"]))
                continue
            assert read.status_code == 200, read.content
            state = read.json()
        if state["status"] == "finished":
            return state
        if state["status"] == "waiting":  # a worker plays the bots
            time.sleep(0.2)
            state = None
            continue
        request = state["request"]
        assert request["protocol"] == "escoba/1"
        assert request["you"]["seat"] == state["seat"]
        move = choose(request["legal_moves"])
        answer = client.post(f"/api/play/{play_id}/move/", move, format="json")
        if answer.status_code == 429:
            time.sleep(float(answer["Retry-After"]))
            state = None
            continue
        assert answer.status_code == 200, answer.json()
        state = answer.json()
        assert state["id"] == play_id
    raise AssertionError("the game did not end in time")


@contextmanager
def short_games(**options: Any) -> Iterator[None]:
    """Every person's game created meanwhile (by this process: the API, the pages, a live
    server's threads) plays under its preset with these ruleset ``options`` (``target=1``:
    over with the first round that is not tied).

    Why: a classic game to 21 points is about six rounds, over 200 answers, each a step through
    the API, the database and a bot. What the tests check of a whole game (every move request
    answered, the end, the stored log, the record, the replay) is the same in a game of one or
    two rounds. The options are set as the league is first saved, so the bots' requests carry
    them from the first one, as for any game created with them.
    """
    from django.db.models.signals import pre_save

    from tournaments.models import League

    def shorten(sender, instance: League, **kwargs) -> None:
        if instance._state.adding and instance.kind == League.Kind.PLAY:
            ruleset = instance.ruleset
            instance.ruleset = {**ruleset, "options": {**ruleset["options"], **options}}

    uid = "tests.play.short_games"
    pre_save.connect(shorten, sender=League, weak=False, dispatch_uid=uid)
    try:
        yield
    finally:
        pre_save.disconnect(sender=League, dispatch_uid=uid)
