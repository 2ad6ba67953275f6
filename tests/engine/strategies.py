"""Hypothesis strategies for the engine's property tests."""

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
