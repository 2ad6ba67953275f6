"""The oracle example is a real cheater: fed what a bot receives in a duplicate set, it knows its
opponent's hand; fed what it receives on fresh deals, it knows nothing it was not dealt."""

from __future__ import annotations

from random import Random

from benchmarks.oracle import play_lockstep, request_state
from bots_sdk.examples import expert
from bots_sdk.examples.oracle import KnownHandsSampler, Oracle, opening_table
from bots_sdk.state import BotState
from games.engine import ALL_CARDS, Game, Ruleset

RULESET = Ruleset.from_preset("classic", {})


def knowledge(seeds: tuple[int, int], ruleset: Ruleset = RULESET) -> tuple[int, int, int]:
    """Play a set in lockstep, the oracle in seat 0 then seat 1 (seats swapped); count its
    requests, those where it knew the opponent's hand, and those where what it knew was wrong."""
    oracle = Oracle(max_deals=2)
    counts = {"requests": 0, "known": 0, "wrong": 0}
    seatings = [[oracle.choose, expert.choose], [expert.choose, oracle.choose]]

    def check(number: int, state: BotState, game: Game) -> None:
        if seatings[number][state.seat] != oracle.choose:
            return
        oracle.remember(state)
        known = oracle.known_hands(state)
        counts["requests"] += 1
        for seat, hand in known.items():
            counts["known"] += 1
            truth = game._hands[seat]  # the engine's own record of that hand
            counts["wrong"] += sorted(card.index for card in hand) != sorted(truth)

    play_lockstep(seeds, seatings, ruleset, ["g1", "g2"], on_request=check)
    return counts["requests"], counts["known"], counts["wrong"]


def test_in_a_duplicate_set_the_oracle_knows_its_opponents_hand():
    requests, known, wrong = knowledge((7, 7))
    assert wrong == 0
    # In lockstep the other game has almost always reached the same deal: most requests know.
    assert known > requests / 2


def test_on_fresh_deals_the_oracle_knows_nothing():
    for seeds in ((7, 8), (101, 2024), (5, 6)):
        requests, known, _ = knowledge(seeds)
        assert requests > 0 and known == 0


def test_a_shared_hand_team_sees_its_partners_hand():
    """One bot in both seats of a team (a user's unrated league may do that): it knows its
    partner's hand in the same game, as the rules forbid, so rated play never seats it so."""
    ruleset = Ruleset.from_preset("classic", {"players": 4, "teams": True})
    oracle = Oracle(max_deals=1)
    seen = []

    def check(number: int, state: BotState, game: Game) -> None:
        if state.seat in (0, 2):
            oracle.remember(state)
            partner = 2 - state.seat
            hand = oracle.known_hands(state).get(partner)
            if hand is not None:
                seen.append(sorted(c.index for c in hand) == sorted(game._hands[partner]))

    seats = [oracle.choose, expert.choose, oracle.choose, expert.choose]
    play_lockstep((3,), [seats], ruleset, ["g"], on_request=check)
    assert seen and all(seen)


def test_the_sampler_deals_the_known_hands_and_keeps_the_rest_consistent():
    game = Game.new(RULESET, seed=11)
    for _ in range(3):
        game.apply(game.legal_moves()[-1])
    state = request_state(game, "g")
    opponent = 1 - state.seat
    truth = tuple(sorted(game._hands[opponent]))
    opening = set(game.log()["rounds"][0]["table"])
    assert {str(ALL_CARDS[i]) for i in opening_table(state)} == opening

    sampler = KnownHandsSampler(state, {opponent: [ALL_CARDS[i] for i in truth]})
    for draw in range(20):
        sample = sampler.sample(Random(draw))
        assert tuple(sample._hands[opponent]) == truth
        assert sorted(sample._hands[state.seat]) == sorted(c.index for c in state.hand)
        future = sample._deck[sample._deck_position :]
        hidden = list(sample._hands[opponent]) + future
        assert sorted(hidden) == sorted({c.index for c in state.unseen_cards()})
