"""Presets, options and their validation."""

import pickle

import pytest

from games.engine import PRESETS, Ruleset, RulesetError

OPTION_NAMES = {
    "target", "players", "teams", "capture", "sevens", "seven_of_oros", "count_rule",
    "big_wins", "all_oros", "all_sevens", "tie", "max_rounds",
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "capture", "sevens", "extra"),
    [
        ("classic", "forced", "setenta", {}),
        ("fournier", "forced", "most", {}),
        ("primera", "forced", "primera", {}),
        ("casual", "optional", "most", {}),
        ("bonus", "forced", "most", {"all_oros": True, "all_sevens": True}),
        ("del15", "forced", "primera", {"count_rule": "over_half"}),
    ],
)
def test_presets_match_their_documents(name, capture, sevens, extra):
    ruleset = Ruleset.from_preset(name)
    assert ruleset.id == f"{name}@1"
    assert set(ruleset.options) == OPTION_NAMES
    assert ruleset.options["capture"] == capture
    assert ruleset.options["sevens"] == sevens
    assert ruleset.options["target"] == 21
    assert ruleset.options["tie"] == "extra_round"
    for key, value in extra.items():
        assert ruleset.options[key] == value


def test_every_preset_is_listed():
    assert set(PRESETS) == {"classic", "fournier", "primera", "casual", "bonus", "del15"}


def test_overrides_and_round_trip():
    ruleset = Ruleset.from_preset("classic", {"target": 15, "players": 4, "teams": True})
    assert ruleset.options["target"] == 15
    assert ruleset.players == 4 and ruleset.num_teams == 2
    assert [ruleset.team_of(seat) for seat in range(4)] == [0, 1, 0, 1]
    data = ruleset.to_dict()
    assert data == {"name": "classic", "version": 1, "options": dict(ruleset.options)}
    assert Ruleset.from_dict(data) == ruleset
    assert pickle.loads(pickle.dumps(ruleset)) == ruleset


def test_without_partnerships_each_seat_is_a_team():
    ruleset = Ruleset.from_preset("classic", {"players": 4})
    assert ruleset.num_teams == 4
    assert [ruleset.team_of(seat) for seat in range(4)] == [0, 1, 2, 3]


def test_casual_plays_in_partnerships_with_four_players():
    assert Ruleset.from_preset("casual", {"players": 4}).options["teams"] is True
    assert Ruleset.from_preset("casual", {"players": 3}).options["teams"] is False
    assert Ruleset.from_preset("casual", {"players": 4, "teams": False}).num_teams == 4


def test_options_cannot_be_changed_after_building():
    ruleset = Ruleset.from_preset("classic")
    with pytest.raises(TypeError):
        ruleset.options["target"] = 3


def test_every_problem_is_listed():
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_preset(
            "classic",
            {"colour": "red", "target": "21", "players": 5, "sevens": "eights", "teams": True},
        )
    problems = caught.value.problems
    assert len(problems) == 5
    text = str(caught.value)
    for word in ("colour", "target", "players", "sevens", "teams"):
        assert word in text


@pytest.mark.parametrize(
    "overrides",
    [
        {"teams": True},
        {"players": 3, "teams": True},
        {"players": True},
        {"target": 0},
        {"max_rounds": 0},
        {"seven_of_oros": 3},
        {"capture": "sometimes"},
        {"tie": "coin"},
        {"all_sevens": True, "sevens": "none"},
        {"big_wins": True, "sevens": "per_suit"},
        {"big_wins": "yes"},
    ],
)
def test_invalid_combinations(overrides):
    with pytest.raises(RulesetError):
        Ruleset.from_preset("classic", overrides)


def test_unknown_preset_and_version():
    with pytest.raises(RulesetError, match="unknown preset"):
        Ruleset.from_preset("chinchon")
    with pytest.raises(RulesetError, match="version"):
        Ruleset.from_dict({"name": "classic", "version": 2, "options": {}})


@pytest.mark.parametrize(
    ("name", "overrides"),
    [({}, None), (["classic"], None), (None, None), ("classic", [("target", 15)]), ("classic", 15)],
)
def test_malformed_preset_names_and_options_are_ruleset_errors(name, overrides):
    with pytest.raises(RulesetError):
        Ruleset.from_preset(name, overrides)


def test_teams_problem_names_the_players_asked_for():
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_preset("classic", {"players": 5, "teams": True})
    assert caught.value.problems == [
        "players must be one of 2, 3, 4, not 5",
        "teams needs 4 players, not 5",
    ]
