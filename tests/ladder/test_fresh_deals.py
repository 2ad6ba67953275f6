"""Rated play never deals a bot a deal it could know: a bot that keeps every request it is sent
holds, from one game, none of the hands its opponent is dealt in another (issue: duplicate sets
handed every bot its opponent's cards)."""

import random
import threading
from collections import defaultdict

import pytest

from bots_sdk.examples import expert
from bots_sdk.server import serve_in_thread
from tournaments.models import Bot, Game
from tournaments.services.ladder import ladder_fill, ladder_league

pytestmark = pytest.mark.django_db(transaction=True)

POOL = "classic/2p"


class Memory:
    """A bot that plays as the expert does and keeps, per (game id, round), every card it was
    ever dealt: all it could link across games."""

    def __init__(self) -> None:
        self.held: dict[tuple[str, int], set[str]] = defaultdict(set)
        self.lock = threading.Lock()

    def choose(self, state):
        with self.lock:
            self.held[(str(state.game_id), state.round)].update(str(c) for c in state.hand)
        return expert.choose(state)


def dealt(game: Game, bot_id: int) -> dict[int, set[str]]:
    """Round number -> every card the bot was dealt in that round of ``game``, from its log."""
    seats = [seat for seat, b in enumerate(game.seating) if b == bot_id]
    rounds = game.log.document["rounds"]
    return {
        number: {card for deal in found["deals"] for seat in seats for card in deal[seat]}
        for number, found in enumerate(rounds, start=1)
    }


def test_a_memory_bot_in_the_ladder_never_holds_its_opponents_deal_from_another_game(
    make_bot, settings
):
    memory = Memory()
    server = serve_in_thread(memory.choose, name="memory")
    try:
        settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 4
        keeper = make_bot("expert", health=Bot.Health.HEALTHY)
        Bot.objects.filter(pk=keeper.pk).update(url=server.url)
        others = [
            make_bot(example, health=Bot.Health.HEALTHY)
            for example in ("greedy", "expert", "random")
        ]
        for _ in range(4):  # eager Celery: each fill's sets are played as it commits
            ladder_fill(pool=POOL, rng=random.Random(3))
    finally:
        server.stop()

    finished = ladder_league(POOL).games.filter(status=Game.Status.FINISHED)
    games = list(finished.select_related("log"))
    mine = [g for g in games if keeper.id in g.seating]
    assert len(mine) >= 8 and memory.held
    opponents = {b.id for b in others}
    # every hand an opponent of the memory bot was dealt, round by round, in games it played
    their_rounds = [
        (game.id, cards)
        for game in mine
        for opponent in set(game.seating) & opponents
        for cards in dealt(game, opponent).values()
    ]
    # what the memory bot kept, per game and round as it was told them (within one game its
    # cards and its opponent's are apart, so every game it played may be compared)
    kept = list(memory.held.items())
    assert len(kept) >= len(mine)
    for game_id, cards in their_rounds:
        for (told, round_number), held in kept:
            assert not cards <= held, (
                f"round {round_number} of game {told} dealt it the cards of game {game_id}"
            )
    # and no deal was played twice anywhere in the ladder
    seeds = [g.seed for g in games]
    assert len(set(seeds)) == len(seeds)


def _shared(league) -> list[bool]:
    """Per set of the league: whether its games share one deal."""
    return [
        len(set(match.games.values_list("seed", flat=True))) == 1
        for match in league.matches.order_by("number")
    ]


def test_only_sets_of_one_owners_bots_share_a_deal(user, make_bot, no_play):
    """A challenge or a version test against another owner's bot is dealt afresh, game by game;
    between two of one's own bots (a version test against one's own baseline) the set may keep
    duplicate deals: nobody else's bot sees them."""
    from tournaments.services.challenges import challenge_create
    from tournaments.services.version_tests import version_test_create

    mine, also_mine = make_bot("expert", owner=user), make_bot("greedy", owner=user)
    theirs = make_bot("random")
    against_them = challenge_create(user=user, bot_id=mine.id, opponent_id=theirs.id, sets=3)
    assert _shared(against_them.league) == [False] * 3
    own = challenge_create(user=user, bot_id=mine.id, opponent_id=also_mine.id, sets=2)
    assert _shared(own.league) == [True] * 2
    tests = {
        baseline: version_test_create(
            user=user, candidate_id=mine.id, baseline_id=baseline.id,
            elo0=-100, elo1=300, alpha=0.05, beta=0.05, max_sets=30,
        )
        for baseline in (also_mine, theirs)
    }  # fmt: skip
    assert set(_shared(tests[also_mine].league)) == {True}
    assert set(_shared(tests[theirs].league)) == {False}
