"""Determinization: sampled full states agree with the seat's view, and spread the unseen cards
over the hidden places uniformly."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Determinizer, EscobaError, Game, Ruleset, determinize
from tests.engine.properties import check_cards_conserved, rulesets


def played(ruleset: Ruleset, seed: int, plays: int) -> Game:
    """A game after ``plays`` seeded random legal moves (fewer if it ends first)."""
    game = Game.new(ruleset, seed)
    chooser = random.Random(seed)
    for _ in range(plays):
        if game.is_over:
            break
        game.apply(chooser.choice(game.legal_moves()))
    return game


def hidden_places(game: Game, seat: int) -> dict[int, str]:
    """Where each card the seat cannot see is: ``"hand <seat>"`` or ``"deck"``."""
    places = {card: "deck" for card in game._deck[game._deck_position :]}
    for other, hand in enumerate(game._hands):
        if other != seat:
            places.update({card: f"hand {other}" for card in hand})
    return places


@settings(max_examples=150, deadline=None)
@given(
    ruleset=rulesets(),
    seed=st.integers(0, 10**6),
    plays=st.integers(0, 80),
    sample_seed=st.integers(0, 2**32),
    any_seat=st.booleans(),
)
def test_every_sample_agrees_with_the_view(ruleset, seed, plays, sample_seed, any_seat):
    game = played(ruleset, seed, plays)
    if game.is_over:
        return
    seat = game.current_seat if not any_seat else seed % ruleset.players
    view = game.view(seat)
    sample = determinize(view, sample_seed)
    # The whole view: own hand, table, round, dealer, deck size, every seat's hand size,
    # captured count and escobas, the scores, this round's history, the legal moves (when it
    # is this seat's turn) and the lucky deal.
    assert sample.view(seat) == view
    assert sample.current_seat == game.current_seat
    assert sample.totals == game.totals
    check_cards_conserved(sample)
    # The hidden places keep their sizes and hold exactly the unseen cards.
    real, sampled = hidden_places(game, seat), hidden_places(sample, seat)
    assert set(sampled) == set(real)
    assert Counter(sampled.values()) == Counter(real.values())
    # Captured cards are public: the sample's piles are the game's.
    assert sample._captured == game._captured
    # The sample is a game that goes on under the rules, to its end.
    chooser = random.Random(sample_seed)
    while not sample.is_over:
        sample.apply(chooser.choice(sample.legal_moves()))


def test_a_seed_repeats_its_sample_and_other_seeds_differ():
    view = played(Ruleset.from_preset("classic"), 11, 7).view(1)
    first, again = determinize(view, 5), determinize(view, 5)
    assert first.log() == again.log() and first.seed == again.seed
    deals = {tuple(map(tuple, determinize(view, seed)._hands)) for seed in range(20)}
    assert len(deals) > 15


@pytest.mark.parametrize(
    ("ruleset", "seed", "plays", "seat"),
    [
        (Ruleset.from_preset("classic"), 3, 7, None),
        (Ruleset.from_preset("classic", {"players": 3}), 8, 10, None),
        (Ruleset.from_preset("classic", {"players": 4, "teams": True}), 21, 6, 2),
    ],
)
def test_each_unseen_card_lands_in_each_hidden_place_at_the_right_rate(ruleset, seed, plays, seat):
    """A card unseen by the seat is in a hidden place with probability (place size) / (unseen
    cards). Over 3,000 samples (fixed seed, so the test cannot flake) the chi-square statistic of
    every card's counts stays below the 99.9th percentile, and so does their sum."""
    game = played(ruleset, seed, plays)
    seat = game.current_seat if seat is None else seat
    view = game.view(seat)
    sampler = Determinizer(view)
    real = hidden_places(game, seat)
    sizes = Counter(real.values())
    unseen = len(real)
    rng = random.Random(2024)
    samples = 3000
    counts = {card: Counter() for card in real}
    for _ in range(samples):
        for card, place in hidden_places(sampler.sample(rng), seat).items():
            counts[card][place] += 1
    degrees = len(sizes) - 1
    assert degrees >= 1
    total = 0.0
    for card, places in counts.items():
        assert set(places) <= set(sizes)
        statistic = sum(
            (places[place] - samples * size / unseen) ** 2 / (samples * size / unseen)
            for place, size in sizes.items()
        )
        assert statistic < chi_square_999(degrees), (card, places)
        total += statistic
    assert total < chi_square_999(degrees * len(counts))


def chi_square_999(degrees: int) -> float:
    """The 99.9th percentile of the chi-square distribution (Wilson-Hilferty approximation)."""
    z = 3.090232  # the standard normal's 99.9th percentile
    k = float(degrees)
    return k * (1 - 2 / (9 * k) + z * (2 / (9 * k)) ** 0.5) ** 3


def test_a_lucky_deal_is_known_and_its_cards_are_never_dealt_again():
    ruleset = Ruleset.from_preset("classic")
    seed = next(s for s in range(500) if Game.new(ruleset, s)._record.lucky is not None)
    game = played(ruleset, seed, 3)
    view = game.view(game.current_seat)
    assert view.lucky_deal is not None
    lucky = {card.index for card in view.lucky_deal.cards}
    for sample_seed in range(50):
        sample = determinize(view, sample_seed)
        assert sample.view(view.seat) == view
        assert not lucky & set(hidden_places(sample, view.seat))


def test_a_view_with_the_wire_ruleset_dict_is_accepted():
    """The bots SDK's request carries the ruleset as a dict; the sampler reads it too."""
    ruleset = Ruleset.from_preset("del15", {"players": 3})
    view = played(ruleset, 4, 9).view(2)
    wire_like = dataclasses.replace(view, ruleset=ruleset.to_dict())
    assert determinize(wire_like, 1).view(2) == view


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"deck_remaining": 3}, "cards are unseen"),
        ({"seats": "one seat short"}, "needs seats 0 to 1"),
        ({"hand": "one card more"}, "holds"),
        ({"captured": 1}, "capture"),
    ],
)
def test_a_view_that_contradicts_itself_is_refused(change, message):
    view = played(Ruleset.from_preset("classic"), 6, 9).view(0)
    if "deck_remaining" in change:
        view = dataclasses.replace(view, deck_remaining=change["deck_remaining"])
    elif "seats" in change:
        view = dataclasses.replace(view, seats=view.seats[:1])
    elif "hand" in change:
        extra = next(card for card in game_cards() if card not in view.hand + view.table)
        view = dataclasses.replace(view, hand=[*view.hand, extra])
    else:
        first = dataclasses.replace(view.seats[0], captured=view.seats[0].captured + 1)
        view = dataclasses.replace(view, seats=[first, *view.seats[1:]])
    with pytest.raises(EscobaError, match=message):
        Determinizer(view)


def game_cards():
    from games.engine import ALL_CARDS

    return ALL_CARDS
