"""``python -m games selfplay|validate``."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from games.cli import main, parse_option
from games.engine import validate_log

ROOT = Path(__file__).resolve().parents[2]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_selfplay_prints_one_valid_game():
    status, out, err = run(
        "selfplay", "--ruleset", "classic", "--set", "target=15", "--players", "2", "--seed", "7"
    )
    assert (status, err) == (0, "")
    doc = json.loads(out)
    assert doc["seed"] == 7 and doc["ruleset"]["options"]["target"] == 15
    validate_log(doc)
    assert run("selfplay", "--set", "target=15", "--seed", "7")[1] == out  # repeatable


def test_selfplay_many_games_one_json_per_line(tmp_path):
    status, out, _ = run(
        "selfplay", "--ruleset", "del15", "--players", "4", "--set", "teams=true",
        "--seed", "3", "--games", "3",
    )  # fmt: skip
    lines = out.splitlines()
    assert status == 0 and len(lines) == 3
    assert [json.loads(line)["seed"] for line in lines] == [3, 4, 5]
    path = tmp_path / "games.jsonl"
    path.write_text(out)
    assert run("validate", str(path)) == (0, f"{path}: 3 valid game logs\n", "")


def test_validate_stops_at_the_first_broken_rule(tmp_path):
    _, out, _ = run("selfplay", "--seed", "1", "--games", "3")
    docs = [json.loads(line) for line in out.splitlines()]
    docs[1]["rounds"][0]["plays"][3]["escoba"] = not docs[1]["rounds"][0]["plays"][3]["escoba"]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(json.dumps(doc) for doc in docs))
    status, _, err = run("validate", str(path))
    assert status == 1
    assert err.startswith(f"{path}: game 2, round 1, play 4: escoba")
    assert err.count("\n") == 1


def test_validate_reports_a_line_that_is_not_json(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": 1}\nnot json\n')
    status, _, err = run("validate", str(path))
    assert status == 1 and "game 1" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["selfplay", "--ruleset", "chinchon"],
        ["selfplay", "--set", "target"],
        ["selfplay", "--set", "colour=red"],
        ["selfplay", "--set", "teams=true"],
        ["selfplay", "--games", "0"],
        ["validate", "/nonexistent/log.json"],
    ],
)
def test_bad_arguments_one_line_status_2(argv):
    status, out, err = run(*argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize(
    "argv", [[], ["selfplay", "--players", "5"], ["selfplay", "--seed", "x"], ["shuffle"]]
)
def test_argument_parser_errors_are_one_line_status_2(argv, capsys):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("target=15", ("target", 15)),
        ("teams=true", ("teams", True)),
        ("teams=False", ("teams", False)),
        ("tie=shared", ("tie", "shared")),
    ],
)
def test_option_values(text, expected):
    assert parse_option(text) == expected


def test_module_entry_point(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "games", "selfplay", "--seed", "2", "--set", "target=5"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["seed"] == 2
    broken = subprocess.run(
        [sys.executable, "-m", "games", "selfplay", "--players", "9"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert broken.returncode == 2 and "Traceback" not in broken.stderr


def test_validate_an_empty_file_is_an_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n \n")
    status, out, err = run("validate", str(path))
    assert (status, out) == (1, "")
    assert err == f"{path}: no game log in the file\n"


def test_validate_a_log_with_a_malformed_ruleset_is_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "escoba-log/1", "ruleset": {"name": {}, "version": 1}}))
    status, _, err = run("validate", str(path))
    assert status == 1 and err.count("\n") == 1
    assert "game 1, bad ruleset" in err


def test_players_and_set_players_must_agree():
    status, out, err = run("selfplay", "--set", "players=3", "--players", "2")
    assert (status, out) == (2, "")
    assert "--players 2 contradicts --set players=3" in err
    status, out, _ = run("selfplay", "--set", "players=3", "--players", "3", "--set", "target=5")
    assert status == 0 and len(json.loads(out)["seats"]) == 3
