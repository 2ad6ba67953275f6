"""The escoba-log/1 document: its schema, replay, and reporting where a log breaks the rules."""

import copy
import json
import random
from pathlib import Path

import jsonschema
import pytest

from games.engine import Game, InvalidLogError, Ruleset, replay_log, validate_log
from games.engine.scoring import BREAKDOWN_KEYS

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "game-log.schema.json").read_text()
)


def played(preset="classic", seed=4, **options):
    game = Game.new(Ruleset.from_preset(preset, options), seed)
    chooser = random.Random(seed)
    while not game.is_over:
        game.apply(chooser.choice(game.legal_moves()))
    return json.loads(json.dumps(game.log()))


@pytest.fixture(scope="module")
def log():
    return played()


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("classic", {}),
        ("del15", {"players": 4, "teams": True}),
        ("casual", {"players": 3, "tie": "shared"}),
        ("bonus", {"players": 4}),
    ],
)
def test_logs_match_the_schema_and_replay(preset, options):
    doc = played(preset, 9, **options)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(doc, SCHEMA)
    assert replay_log(doc).log() == doc


def test_log_content(log):
    assert log["format"] == "escoba-log/1"
    assert log["ruleset"]["name"] == "classic" and log["ruleset"]["version"] == 1
    assert log["seats"] == [{"seat": 0, "team": 0}, {"seat": 1, "team": 1}]
    first = log["rounds"][0]
    assert len(first["plays"]) == 36 and len(first["deals"]) == 6
    assert log["result"]["totals"] == log["rounds"][-1]["totals"]
    assert log["result"]["reason"] == "target"
    assert [round_["dealer"] for round_ in log["rounds"]][:3] == [0, 1, 0]


def test_forfeited_and_unfinished_games_match_the_schema():
    game = Game.new(Ruleset.from_preset("classic"), 5)
    for _ in range(40):
        game.apply(game.legal_moves()[0])
    unfinished = json.loads(json.dumps(game.log()))
    jsonschema.validate(unfinished, SCHEMA)
    validate_log(unfinished)
    game.forfeit(1, "timeouts")
    forfeited = json.loads(json.dumps(game.log()))
    jsonschema.validate(forfeited, SCHEMA)
    assert forfeited["rounds"][-1]["score"] is None
    assert replay_log(forfeited).result.forfeit_seat == 1


def first_capture(doc):
    for r, round_ in enumerate(doc["rounds"]):
        for p, play in enumerate(round_["plays"]):
            if play["capture"]:
                return r, p
    raise AssertionError


def tamper(doc, change):
    broken = copy.deepcopy(doc)
    change(broken)
    return broken


def swap_seat(doc):
    doc["rounds"][0]["plays"][2]["seat"] = 1 - doc["rounds"][0]["plays"][2]["seat"]


def escoba_flag(doc):
    doc["rounds"][1]["plays"][4]["escoba"] = not doc["rounds"][1]["plays"][4]["escoba"]


def unknown_card(doc):
    doc["rounds"][0]["plays"][0]["card"] = "11o"


@pytest.mark.parametrize(
    ("change", "where", "words"),
    [
        (swap_seat, (1, 3), "turn"),
        (escoba_flag, (2, 5), "escoba"),
        (unknown_card, (1, 1), "illegal"),
        (lambda d: d["rounds"][0]["totals"].__setitem__(0, 99), (1, None), "totals"),
        (lambda d: d["rounds"][0]["score"][0].__setitem__("cards", 41), (1, None), "score"),
        (lambda d: d["rounds"][1].__setitem__("dealer", 0), (2, None), "dealer"),
        (lambda d: d["rounds"][0]["table"].reverse(), (1, None), "table"),
        (lambda d: d["rounds"][0]["deals"][1].reverse(), (1, None), "deals"),
        (lambda d: d["rounds"][0]["plays"].pop(), (1, None), "stops"),
        (lambda d: d["rounds"].pop(), (None, None), "goes on"),
        (lambda d: d["rounds"].append(d["rounds"][-1]), (len, None), "already over"),
        (lambda d: d["result"].__setitem__("winner", None), (None, None), "result"),
        (lambda d: d.__setitem__("extra", 1), (None, None), "extra"),
        (lambda d: d.__setitem__("seed", d["seed"] + 1), (1, None), ""),
        (lambda d: d.__setitem__("format", "escoba-log/2"), (None, None), "format"),
        (lambda d: d["ruleset"]["options"].__setitem__("players", 5), (None, None), "ruleset"),
        (lambda d: d["seats"].pop(), (None, None), "seats"),
    ],
)
def test_broken_logs_say_where(log, change, where, words):
    broken = tamper(log, change)
    with pytest.raises(InvalidLogError) as caught:
        validate_log(broken)
    expected_round = len(broken["rounds"]) if where[0] is len else where[0]
    assert (caught.value.round, caught.value.play) == (expected_round, where[1])
    assert words in str(caught.value)


def test_an_illegal_capture_is_reported_at_its_play(log):
    r, p = first_capture(log)
    broken = tamper(log, lambda d: d["rounds"][r]["plays"][p].__setitem__("capture", []))
    with pytest.raises(InvalidLogError) as caught:
        validate_log(broken)
    assert (caught.value.round, caught.value.play) == (r + 1, p + 1)
    assert "must_capture" in str(caught.value)


def test_a_log_must_be_an_object():
    with pytest.raises(InvalidLogError):
        validate_log([])


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["ruleset"].__setitem__("version", True), ".ruleset.version"),
        (lambda d: d["rounds"][1].__setitem__("dealer", 1.0), ".rounds[1].dealer"),
        (
            lambda d: d["rounds"][0]["plays"][2].__setitem__(
                "seat", bool(d["rounds"][0]["plays"][2]["seat"])
            ),
            ".rounds[0].plays[2].seat",
        ),  # noqa: E501
        (
            lambda d: d["rounds"][0]["totals"].__setitem__(0, float(d["rounds"][0]["totals"][0])),
            ".rounds[0].totals[0]",
        ),  # noqa: E501
    ],
)
def test_equal_values_of_another_json_type_are_invalid(log, change, path):
    """``true == 1`` and ``1.0 == 1`` in Python, but a log must repeat the replay exactly."""
    broken = tamper(log, change)
    with pytest.raises(InvalidLogError) as caught:
        validate_log(broken)
    assert path in str(caught.value)


JUNK = [None, True, 0, -1, 7, 2**70, 1.5, "x", "7o", "11o", [], {}, ["7o"], [[]], {"seat": 0}]


def json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from json_paths(item, (*path, index))


def test_any_damaged_log_is_reported_as_invalid_never_a_crash(log):
    """Replace or delete one value anywhere in a log (seeded, 1,500 cases): the validator must
    answer with InvalidLogError (what the API and the CLI report), never another exception,
    and never accept the damage."""
    paths = [path for path in json_paths(log) if path]
    chooser = random.Random(5)
    for _ in range(1500):
        path = chooser.choice(paths)
        broken = copy.deepcopy(log)
        parent = broken
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and chooser.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = chooser.choice(JUNK)
        if broken == log and _same_types(broken, log):
            continue
        try:
            validate_log(broken)
        except InvalidLogError:
            continue
        # Only another valid option can leave the log valid, when the game plays out the same
        # under it (say all_oros=true and nobody took all ten oros).
        assert path[:2] == ("ruleset", "options"), (path, broken)


def _same_types(left, right):
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def test_every_log_of_a_game_and_of_its_clones_has_the_score_breakdown_once():
    """The breakdown is added when a log first asks for a round (clones share finished rounds):
    whichever copy asks first, and however often, every log shows it, the same."""
    game = Game.new(Ruleset.from_preset("classic"), 11)
    chooser = random.Random(11)
    clones = []
    while not game.is_over:
        number = game.round
        game.apply(chooser.choice(game.legal_moves()))
        if game.round != number:
            clones.append(game.clone())
    assert len(clones) >= 2
    ended = game.clone()
    logs = [ended.log(), game.log(), game.log(), *(c.log() for c in clones)]
    assert logs[0] == logs[1] == logs[2]
    for logged in logs:
        for number, round_log in enumerate(logged["rounds"]):
            if round_log["score"] is not None:
                for side in round_log["score"]:
                    assert list(side)[-3:] == list(BREAKDOWN_KEYS), (number, side)
                assert logs[0]["rounds"][number]["score"] == round_log["score"]
