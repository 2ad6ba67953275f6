"""What every seat sees of a game while it is played, and nothing more: the public view that
spectators are shown live (the arena's live streams replay the published moves through it).

A ``PublicGame`` replays a game from its seed and its moves and keeps the game so far as an
escoba-log/1 document without the seed, whose ``deals`` hold ``null`` for each card dealt (the
viewer shows the backs), with ``meta[r][p]`` holding each play's fault. Each fact comes from the
engine: plays and escobas from the seats' public history, a round's score from the engine's log
when the round ends. Never a hand, the deck or the seed: the seed is only what the replay starts
from, and nothing it deals leaves here but the count of cards.
"""

from __future__ import annotations

from typing import Any

from .engine import Game, Move, Ruleset


class PublicGame:
    """A game replayed from its seed and its moves, showing only what is public (``doc``)."""

    def __init__(self, ruleset: Ruleset, seed: int) -> None:
        self._game = Game.new(ruleset, seed)
        log = self._game.log()
        self._sizes = self._hand_sizes()
        self.doc: dict[str, Any] = {
            "format": log["format"],
            "ruleset": log["ruleset"],
            "seats": log["seats"],
            "rounds": [self._header(log["rounds"][0])],
            "result": None,
            "meta": [[]],
            "live": True,
        }

    def _hand_sizes(self) -> list[int]:
        return [seat.hand_size for seat in self._game.view(0).seats]

    def _header(self, round_log: dict[str, Any]) -> dict[str, Any]:
        """A new round as everyone sees it: dealer, table, lucky deal, and one hidden deal."""
        return {
            "dealer": round_log["dealer"],
            "table": round_log["table"],
            "lucky_deal": round_log["lucky_deal"],
            "deals": [[[None] * size for size in self._sizes]],
            "plays": [],
            "leftover": None,
            "score": None,
            "totals": None,
        }

    def play(self, move: str, fault: str | None) -> dict[str, Any]:
        """Play ``move`` (its text form); what it changed, as everyone sees it: ``round``,
        ``play``, ``meta``, and ``deal`` (new hidden hands), ``round_end``, ``next_round``,
        ``result`` when they happen. Raises the engine's error for a move it refuses."""
        rounds = self.doc["rounds"]
        index = len(rounds) - 1
        number = self._game.round
        self._game.apply(Move.from_str(move))
        change: dict[str, Any] = {"round": index, "meta": {"fault": fault}}
        if not self._game.is_over and self._game.round == number:
            view = self._game.view(0)
            last = view.history[-1]
            play = {
                "seat": last.seat,
                "card": str(last.card),
                "capture": [str(card) for card in last.capture],
                "escoba": last.escoba,
            }
            sizes = [seat.hand_size for seat in view.seats]
            if sum(sizes) > sum(self._sizes):  # the hands were empty: a new deal
                deal = [[None] * size for size in sizes]
                rounds[index]["deals"].append(deal)
                change["deal"] = deal
            self._sizes = sizes
        else:
            log = self._game.log()
            ended = log["rounds"][index]
            play = ended["plays"][-1]
            change["round_end"] = {key: ended[key] for key in ("leftover", "score", "totals")}
            rounds[index].update(change["round_end"])
            if len(log["rounds"]) > index + 1:
                self._sizes = self._hand_sizes()
                header = self._header(log["rounds"][index + 1])
                rounds.append(header)
                self.doc["meta"].append([])
                change["next_round"] = header
            self.doc["result"] = change["result"] = log["result"]
        rounds[index]["plays"].append(play)
        self.doc["meta"][index].append(change["meta"])
        change["play"] = play
        return change

    def forfeit(self, seat: int) -> dict[str, Any]:
        """``seat`` forfeited (too many faults): the result, as the ``forfeit`` change says it."""
        self._game.forfeit(seat, reason="faults")
        self.doc["result"] = self._game.log()["result"]
        return {"round": len(self.doc["rounds"]) - 1, "forfeit": seat, "result": self.doc["result"]}
