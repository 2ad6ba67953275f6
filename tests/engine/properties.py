"""What the engine's property tests share: the rulesets they draw, and the invariant that every
one of the 40 cards is in exactly one place."""

from __future__ import annotations

from hypothesis import strategies as st

from games.engine import PRESETS, Ruleset


@st.composite
def rulesets(draw):
    name = draw(st.sampled_from(sorted(PRESETS)))
    players = draw(st.sampled_from([2, 3, 4]))
    options = {"players": players, "target": draw(st.sampled_from([15, 21, 31]))}
    if players == 4:
        options["teams"] = draw(st.booleans())
    if draw(st.booleans()):
        options["tie"] = "shared"
    if draw(st.booleans()):
        options["seven_of_oros"] = 2
    if draw(st.booleans()):
        options["big_wins"] = True
    else:
        options["sevens"] = draw(
            st.sampled_from(["setenta", "most", "primera", "per_suit", "none"])
        )
        options["all_oros"] = draw(st.booleans())
        if options["sevens"] in ("per_suit", "none"):
            options["all_sevens"] = False
    return Ruleset.from_preset(name, options)


def check_cards_conserved(game):
    held = []
    for hand in game._hands:
        held += hand
    held += game._table
    held += game._deck[game._deck_position :]
    captured = 0
    for mask in game._captured:
        assert not mask & captured
        captured |= mask
    assert len(held) == len(set(held))
    assert not captured & sum(1 << card for card in held)
    assert len(held) + captured.bit_count() == 40
