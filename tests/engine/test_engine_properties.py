"""Random legal play over random seeds, rulesets and player counts, checking every step."""

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Game, replay_log, validate_log
from games.engine.cards import VALUES
from games.engine.scoring import round_totals, score_round
from games.engine.state import decode_play
from tests.engine.properties import check_cards_conserved, rulesets


def check_view_hides_hidden_cards(game):
    hidden_by_seat = {
        seat: {c for other, hand in enumerate(game._hands) if other != seat for c in hand}
        | set(game._deck[game._deck_position :])
        for seat in range(game.ruleset.players)
    }
    for seat, hidden in hidden_by_seat.items():
        view = game.view(seat)
        seen = {card.index for card in view.hand + view.table}
        for play in view.history:
            seen |= {play.card.index} | {card.index for card in play.capture}
        for move in view.legal_moves:
            seen |= {move.card.index} | {card.index for card in move.capture}
        assert not seen & hidden
        assert view.deck_remaining == 40 - game._deck_position


def category_bounds(options):
    """The most points each category can hand out in one round under these options."""
    big = options["big_wins"]
    sevens = {"per_suit": 4, "none": 0}.get(
        options["sevens"], 2 if big or options["all_sevens"] else 1
    )
    return {
        "cards": 2 if big else 1,
        "oros": 2 if big or options["all_oros"] else 1,
        "sevens": sevens,
    }


def check_round(record, score, options):
    escoba_plays = [0] * 4
    for seat, move, escoba in map(decode_play, record.plays):
        if move.capture:
            assert move.card.value + sum(card.value for card in move.capture) == 15
        escoba_plays[seat] += escoba
    leftover = record.leftover[1] if record.leftover else []
    assert sum(VALUES[c] for c in leftover) % 15 == 10
    for category, most in category_bounds(options).items():
        assert sum(side["points"][category] for side in score) <= most
    # the 7 of oros is always captured by somebody, and it is never tied
    assert sum(side["points"]["seven_of_oros"] for side in score) == options["seven_of_oros"]
    lucky = record.lucky[2] if record.lucky else 0
    assert sum(side["escobas"] for side in score) == sum(escoba_plays) + lucky
    for side in score:
        assert side["points"]["escobas"] == side["escobas"]
        assert side["total"] == sum(side["points"].values())
    assert sum(side["cards"] for side in score) == 40


@settings(max_examples=200, deadline=None)
@given(
    ruleset=rulesets(),
    owners=st.lists(st.integers(0, 3), min_size=40, max_size=40),
    escobas=st.lists(st.integers(0, 6), min_size=4, max_size=4),
)
def test_round_totals_are_the_totals_of_the_full_score(ruleset, owners, escobas):
    # A game plays on with round_totals and builds score_round only for its log: they must agree
    # on every way the cards can fall, including a side that took none.
    sides = ruleset.num_teams
    captured = [0] * sides
    for card, owner in enumerate(owners):
        captured[owner % sides] |= 1 << card
    options = ruleset.options
    score = score_round(options, captured, escobas[:sides])
    assert round_totals(options, captured, escobas[:sides]) == [side["total"] for side in score]


@settings(max_examples=40, deadline=None)
@given(ruleset=rulesets(), seed=st.integers(0, 2**40), chooser_seed=st.integers(0, 2**16))
def test_random_play_keeps_every_invariant(ruleset, seed, chooser_seed):
    game = Game.new(ruleset, seed)
    chooser = random.Random(chooser_seed)
    steps = 0
    while not game.is_over:
        check_cards_conserved(game)
        if steps % 7 == 0:
            check_view_hides_hidden_cards(game)
        moves = game.legal_moves()
        assert moves
        game.apply(chooser.choice(moves))
        steps += 1
    log = json.loads(json.dumps(game.log()))
    before = [0] * ruleset.num_teams
    for record, logged in zip(game._rounds, log["rounds"], strict=True):
        check_round(record, logged["score"], ruleset.options)
        # the totals the game played on with are the sums of the scores its log shows
        won = [side["total"] for side in logged["score"]]
        assert logged["totals"] == [b + w for b, w in zip(before, won, strict=True)]
        before = logged["totals"]
    assert game.totals == before
    validate_log(log)
    assert replay_log(log).log() == log


@settings(max_examples=15, deadline=None)
@given(ruleset=rulesets(), seed=st.integers(0, 2**40), stop=st.integers(0, 150))
def test_forfeit_at_any_point_replays(ruleset, seed, stop):
    game = Game.new(ruleset, seed)
    chooser = random.Random(seed)
    for _ in range(stop):
        if game.is_over:
            return
        game.apply(chooser.choice(game.legal_moves()))
    if game.is_over:
        return
    seat = game.current_seat
    game.forfeit(seat, "timeouts")
    log = json.loads(json.dumps(game.log()))
    assert log["result"]["forfeit"] == ruleset.team_of(seat)
    assert replay_log(log).log() == log


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(-(2**70), 2**70), round_number=st.integers(1, 50))
def test_every_round_deck_is_a_permutation(seed, round_number):
    from games.engine.state import round_deck

    deck = round_deck(seed, round_number)
    assert sorted(deck) == list(range(40))
    assert deck == round_deck(seed, round_number)
