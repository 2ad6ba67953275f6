"""What the tests of people's games share: a game played out with legal moves."""

from __future__ import annotations

import time


def play_out(client, play_id: int, choose=lambda legal: legal[-1], limit_s: float = 300) -> dict:
    """Answer every move request with a legal move until the game is over; the last state."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        read = client.get(f"/api/play/{play_id}/")
        if read.status_code == 429:  # the API's throttle: a polite client waits as told
            time.sleep(float(read["Retry-After"]))
            continue
        assert read.status_code == 200, read.content
        state = read.json()
        if state["status"] == "finished":
            return state
        if state["status"] == "waiting":
            time.sleep(0.2)
            continue
        request = state["request"]
        assert request["protocol"] == "escoba/1"
        assert request["you"]["seat"] == state["seat"]
        move = choose(request["legal_moves"])
        answer = client.post(f"/api/play/{play_id}/move/", move, format="json")
        assert answer.status_code == 200, answer.json()
    raise AssertionError("the game did not end in time")
