"""The ranking rule the arena and the SDK's league share (games.ratings.ranking; no database):
figures from a fit, provisional while the interval is wide, established ratings first."""

from hypothesis import given, settings
from hypothesis import strategies as st

from games.ratings.fit import fit_ratings
from games.ratings.ranking import DEFAULT_PROVISIONAL_HALF_WIDTH, ranking_key, rated

SCORES = st.sampled_from([0.0, 0.5, 1.0])
PLAYERS = st.integers(min_value=1, max_value=5)
RESULTS = st.lists(
    st.tuples(PLAYERS, PLAYERS, SCORES).filter(lambda r: r[0] != r[1]), min_size=1, max_size=60
)
ROWS = st.lists(
    st.tuples(st.booleans(), st.floats(1000, 2000), st.sampled_from(["ana", "Bea", "cid", "Ana"])),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(RESULTS, st.floats(min_value=1, max_value=400))
def test_figures_are_the_fits_and_provisional_is_a_wide_interval(results, threshold):
    fit = fit_ratings(results)
    for player in fit.players:
        figures = rated(fit, int(player), provisional_half_width=threshold)
        half = fit.half_width(int(player))
        assert figures.rating == fit.rating_of(int(player))
        assert (figures.low, figures.high) == (figures.rating - half, figures.rating + half)
        assert figures.provisional == (half > threshold)


def test_the_default_threshold_is_the_settings_default(settings):
    fit = fit_ratings([(1, 2, 1.0)])  # one result: an interval far wider than the default
    assert rated(fit, 1).provisional
    assert settings.ESCOBA_PROVISIONAL_HALF_WIDTH == DEFAULT_PROVISIONAL_HALF_WIDTH


@settings(max_examples=100, deadline=None)
@given(ROWS)
def test_established_first_each_group_best_first_then_by_name(rows):
    ranked = sorted(rows, key=lambda row: ranking_key(*row))
    provisional = [row[0] for row in ranked]
    assert provisional == sorted(provisional)  # every established rating before any provisional
    for before, after in zip(ranked, ranked[1:], strict=False):
        if before[0] == after[0]:
            assert before[1] >= after[1]
            if before[1] == after[1]:
                assert before[2].lower() <= after[2].lower()
