"""`python -m bots_sdk league`: duplicate sets in-process or over HTTP, scored as the arena does."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bots_sdk import serve_in_thread
from bots_sdk.__main__ import main
from bots_sdk.examples import expert, greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.league import HttpPlayer, LeagueError, LocalPlayer, run_league
from bots_sdk.progress import Progress
from games.faults import DEFAULT_MAX_FAULTS
from games.ratings.fit import PairTable, fit_table
from games.ratings.sets import GameFacts, set_pair_scores

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_" + "bGVhZ3VlLXRlc3Qtc2VjcmV0LXZhbHVl"
EXAMPLES = ["bots_sdk.examples.greedy", "bots_sdk.examples.random", "bots_sdk.examples.expert"]


def local(*targets):
    return [LocalPlayer(target) for target in targets]


def rows_by_name(report) -> dict:
    return {row["bot"]: row for row in report.to_dict()["standings"]}


def test_example_bots_in_process_every_set_counted_once():
    report = run_league(local(greedy.choose, random_bot.choose, expert.choose), sets=2, seed=5)

    rows = rows_by_name(report)
    # 3 pairings, 2 duplicate sets each, 2 games a set.
    assert report.games == 12
    for row in rows.values():
        assert row["sets"] == 4 and row["games"] == 8
        assert row["sets_won"] + row["sets_drawn"] + row["sets_lost"] == 4
        assert row["rating_low"] < row["rating"] < row["rating_high"]
    assert sum(r["sets_won"] for r in rows.values()) + sum(
        r["sets_drawn"] for r in rows.values()
    ) / 2 == pytest.approx(6)
    # The ratings are anchored at 1500 on average, as the arena's are.
    assert sum(r["rating"] for r in rows.values()) / 3 == pytest.approx(1500, abs=0.05)


def test_the_crosstable_adds_up_for_every_pair():
    report = run_league(local(greedy.choose, random_bot.choose, expert.choose), sets=1, seed=2)

    for (a, b), (score, games) in report.crosstable.items():
        other_score, other_games = report.crosstable[(b, a)]
        assert games == other_games == 2
        assert score + other_score == games
    assert "Crosstable" in report.to_text()


def test_the_same_seed_plays_the_same_league_and_another_seed_other_deals():
    def play(seed):
        return run_league(local(greedy.choose, random_bot.choose), sets=3, seed=seed).to_dict()

    first, again, other = play(11), play(11), play(12)

    assert first == again
    assert len(first["played"]) == 6
    assert [game["seed"] for game in first["played"]] != [game["seed"] for game in other["played"]]
    assert [game["totals"] for game in first["played"]] != [
        game["totals"] for game in other["played"]
    ]


def test_the_rating_is_the_arena_s_fit_of_the_set_scores():
    """A bot that always forfeits loses every set; the fit of those set scores (the arena's own
    functions) is what the report prints."""

    def raising(state):
        raise RuntimeError("no idea")

    report = run_league([LocalPlayer(greedy.choose), LocalPlayer(raising, name="broken")], sets=2)

    rows = rows_by_name(report)
    assert rows["broken"]["sets_lost"] == 2 and rows["greedy"]["sets_won"] == 2
    # Forfeit on fault number max_faults + 1, in each of the 4 games.
    assert rows["broken"]["faults"] == 4 * (DEFAULT_MAX_FAULTS + 1)
    forfeited = GameFacts(participants=((0, 0), (1, 1)), winner=0, totals=(0, 0), forfeit_team=1)
    scores = set_pair_scores([forfeited, forfeited]) * 2
    fit = fit_table(PairTable.from_results(scores, players=[0, 1]))
    assert rows["greedy"]["rating"] == round(fit.rating_of(0), 2)
    assert rows["broken"]["rating"] == round(fit.rating_of(1), 2)
    assert report.standings[0].name == "greedy"


def test_three_and_four_player_leagues():
    trio = run_league(
        local(greedy.choose, random_bot.choose, expert.choose), table_size=3, sets=1, seed=1
    )
    pairs = run_league(local(greedy.choose, random_bot.choose), table_size=4, sets=1, seed=1)

    assert trio.games == 3 and trio.ruleset.players == 3
    assert all(row.sets == 1 for row in trio.standings)
    assert pairs.games == 2 and pairs.ruleset.to_dict()["options"]["teams"] is True
    assert all(row.games == 2 for row in pairs.standings)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table_size": 3}, "a 3-player league needs at least 3 bots, got 2"),
        ({"table_size": 5}, "--players must be 2, 3 or 4"),
        ({"ruleset": "nonsense"}, "ruleset: "),
        ({"sets": 0}, "--sets must be at least 1"),
    ],
)
def test_leagues_that_cannot_be_played_are_refused(kwargs, message):
    with pytest.raises(LeagueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_league(local(greedy.choose, random_bot.choose), **kwargs)


def test_over_http_a_real_bot_plays_exactly_as_in_process():
    """Transport does not change the games: a served greedy bot gets the same table."""
    in_process = run_league(local(greedy.choose, random_bot.choose), sets=2, seed=3)
    with serve_in_thread(greedy.choose, secret=SECRET) as handle:
        player = HttpPlayer(handle.url, secret=SECRET, timeout_ms=5000)
        try:
            over_http = run_league([player, LocalPlayer(random_bot.choose)], sets=2, seed=3)
        finally:
            player.close()

    assert over_http.to_dict() == in_process.to_dict()


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        (None, "refuses unsigned calls \\(HTTP 401\\): give --secret"),
        ("whsec_" + "b3RoZXItc2VjcmV0LXZhbHVlLWhlcmU=", "refuses our signature .*is --secret"),
    ],
)
def test_an_http_bot_that_refuses_our_calls_stops_the_league(secret, message):
    with serve_in_thread(greedy.choose, secret=SECRET) as handle:
        player = HttpPlayer(handle.url, secret=secret, timeout_ms=2000)
        try:
            with pytest.raises(LeagueError, match=message):
                run_league([player, LocalPlayer(random_bot.choose)], sets=1)
        finally:
            player.close()


def test_the_command_prints_the_table_and_json(capsys):
    status = main(["league", *EXAMPLES, "--sets", "1", "--seed", "4", "--quiet"])
    text = capsys.readouterr()
    as_json = main(["league", *EXAMPLES, "--sets", "1", "--seed", "4", "--json", "--quiet"])
    data = json.loads(capsys.readouterr().out)

    assert status == as_json == 0
    assert text.err == ""
    assert "sets  won drawn lost" in text.out and "95 % interval" in text.out
    for row in data["standings"]:
        assert row["bot"] in text.out
        assert f"{row['rating']:.1f}" in text.out
    assert {row["bot"] for row in data["standings"]} == {"greedy", "random", "expert"}


def test_the_command_mixes_a_url_and_functions(capsys):
    with serve_in_thread(expert.choose, name="served") as handle:
        status = main(
            ["league", handle.url, "bots_sdk.examples.greedy", "--sets", "1", "--json", "--quiet"]
        )
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert data["bots"] == ["served", "greedy"]


def test_the_command_explains_what_it_cannot_do():
    with pytest.raises(SystemExit, match="league: a 3-player league needs at least 3 bots"):
        main(["league", "bots_sdk.examples.greedy", "bots_sdk.examples.random", "--players", "3"])
    with pytest.raises(SystemExit, match="cannot reach the bot at http://127.0.0.1:1"):
        main(["league", "http://127.0.0.1:1", "bots_sdk.examples.greedy"])
    with pytest.raises(SystemExit, match="--ruleset: not JSON"):
        main(["league", *EXAMPLES, "--ruleset", "{nope"])


def test_progress_redraws_on_a_terminal_and_writes_lines_elsewhere():
    terminal, log = io.StringIO(), io.StringIO()
    on_tty, in_log = Progress(terminal, label="games", tty=True), Progress(log, label="games")
    for done in range(1, 41):
        on_tty(done, 40)
        in_log(done, 40)
    on_tty.finish()

    assert terminal.getvalue().count("\r") == 40 and terminal.getvalue().endswith("\n")
    assert "[" + "#" * 30 + "] 40/40 games" in terminal.getvalue()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    # The first step, then one line per tenth of the way.
    assert [line.split()[0] for line in lines] == ["1/40"] + [f"{4 * k}/40" for k in range(1, 11)]


def test_progress_goes_to_stderr_when_run_as_a_program():
    result = subprocess.run(
        [sys.executable, "-m", "bots_sdk", "league", *EXAMPLES[:2], "--sets", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1].startswith("2/2 games")
    assert "Crosstable" in result.stdout and "games" not in result.stdout.splitlines()[-1]
