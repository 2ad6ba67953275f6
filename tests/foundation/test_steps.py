"""`make test` and `make test-fast` run their steps through scripts/steps.py: it stops at the first
failure and says which steps passed, which failed and which were skipped."""

from __future__ import annotations

import pytest

from scripts.steps import parse, run


def test_the_steps_stop_at_a_failure_and_the_summary_names_every_step(capsys):
    steps = parse(["first=true", "second=exit 3", "third=echo never"])

    status = run(steps)

    out = capsys.readouterr().out
    summary = out.split("=== steps", 1)[1]
    assert status == 3
    assert "passed" in summary.splitlines()[1] and "first" in summary.splitlines()[1]
    assert "FAILED (3)" in summary and "second" in summary
    assert "skipped" in summary and "third (after the failure above)" in summary
    assert "never" not in out  # the third step did not run


def test_every_step_passing_is_status_0(capsys):
    assert run(parse(["one=true", "two=true"])) == 0
    assert "skipped" not in capsys.readouterr().out


def test_a_step_without_a_command_is_refused():
    with pytest.raises(SystemExit, match="is not name=command"):
        parse(["lint"])
