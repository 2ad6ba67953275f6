"""A person's game, step by step: the CPU of what the service does for each step of it.

    .venv/bin/python -m benchmarks.play_steps [--games 3] [--players 2] [--target 21]

Whole games of a person against the SDK's greedy bot, the person also playing greedy, through
the services a step runs (`tournaments.services.play`): `play_create`, then `play_advance` for
the bots' turns (the games queue's task), `play_read` once per turn of the person (their page or
client reading the request) and `play_move`. The bot is asked in this process, and the Redis
feeds and the queue are left out (no Redis; `play_advance` is called here), so what is measured
is the service's own work: SQLite in a temporary directory (`config.settings.local`), this
process's CPU (`time.process_time`).

Each seed is played twice, interleaved: with every step replaying the game from its answers
(`ESCOBA_PLAY_REFEREE_CACHE=0`, the referee rebuilt at each step) and with the referees kept
between steps (the setting's default). Reported: answers per game, CPU per game (and of it the
referee's: `play_referee.referee_after` and `replayed_from_seed`) and per step, and the load
average.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from unittest import mock


def setup() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DEBUG="0",
        ESCOBA_DATA_DIR=tempfile.mkdtemp(prefix="escoba-play-steps-"),
        LOG_LEVEL="ERROR",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def play_one(person, bots: list, options: dict, seed: int) -> tuple[int, int, float, float]:
    """One whole game: (answers, steps, CPU seconds, of which the referee's)."""
    import secrets

    from django.db.models.signals import pre_save

    from bots_sdk.bot import as_bot
    from bots_sdk.examples import greedy
    from bots_sdk.local import ask
    from bots_sdk.state import BotState
    from tournaments.models import League, PersonGame
    from tournaments.services import play, play_referee

    player = as_bot(greedy.choose)

    async def bot_answer(url, secret, body, timeout_ms):
        return ask(player, body)

    async def no_notices(bots, name, timeout_ms):
        return None

    def with_options(sender, instance: League, **kwargs) -> None:
        if instance._state.adding and instance.kind == League.Kind.PLAY:
            ruleset = instance.ruleset
            instance.ruleset = {**ruleset, "options": {**ruleset["options"], **options}}

    refereeing = [0.0]

    def timed(function):
        def run(person_game):
            started = time.process_time()
            try:
                return function(person_game)
            finally:
                refereeing[0] += time.process_time() - started

        return run

    pre_save.connect(with_options, sender=League, weak=False, dispatch_uid="play_steps")
    kwargs = {"opponent": bots[0].id} if len(bots) == 1 else {
        "partner": bots[0].id, "opponents": [bots[1].id, bots[2].id]}  # fmt: skip
    with (
        mock.patch.object(play, "_ask", bot_answer),
        mock.patch.object(play, "_notify", no_notices),
        mock.patch.object(play, "_publish", lambda *args, **kwargs: None),
        mock.patch.object(play, "reads_changed", lambda *args: None),
        mock.patch.object(play.queueing, "play_advance_enqueue", lambda *args: None),
        mock.patch.object(secrets, "randbits", lambda bits: seed),
        mock.patch.object(secrets, "randbelow", lambda n: 0),
        mock.patch.object(play_referee, "referee_after", timed(play_referee.referee_after)),
        mock.patch.object(
            play_referee, "replayed_from_seed", timed(play_referee.replayed_from_seed)
        ),
    ):
        started = time.process_time()
        made = play.play_create(person=person, players=len(bots) + 1, **kwargs)
        steps = 1
        while True:
            steps += 1
            if play.play_advance(person_game_id=made.id) == "finished":
                break
            steps += 1
            state = play.play_read(person_game_id=made.id, person=person)
            move, _ = player.answer(BotState.from_request(state.request))
            wire = move.to_wire()
            steps += 1
            person_game = play.play_move(
                person_game_id=made.id, person=person, card=wire["card"], capture=wire["capture"]
            )
            if person_game.status == PersonGame.Status.FINISHED:
                break
        cpu = time.process_time() - started
    pre_save.disconnect(sender=League, dispatch_uid="play_steps")
    answers = len(PersonGame.objects.get(pk=made.id).answers)
    return answers, steps, cpu, refereeing[0]


def run(args: argparse.Namespace) -> None:
    setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from tournaments.models import Bot, PersonGame

    kept = settings.ESCOBA_PLAY_REFEREE_CACHE
    person = get_user_model().objects.create_user(username="person")
    author = get_user_model().objects.create_user(username="author")
    bots = [
        Bot.objects.create(owner=author, name=f"greedy{n}", url=f"http://127.0.0.1:9/{n}",
                           secret="whsec_" + "A" * 32, accepts_challenges=True)
        for n in range(args.players - 1)
    ]  # fmt: skip
    options = {"target": args.target}
    totals = {0: [0, 0, 0.0, 0.0], kept: [0, 0, 0.0, 0.0]}
    for number in range(args.games):
        for size in (0, kept):
            settings.ESCOBA_PLAY_REFEREE_CACHE = size
            figures = play_one(person, bots, options, seed=1000 + number)
            PersonGame.objects.all().update(status=PersonGame.Status.FINISHED)
            totals[size] = [
                total + figure for total, figure in zip(totals[size], figures, strict=True)
            ]
    load = os.getloadavg()
    print(f"{args.games} games per mode, {args.players} players, target {args.target}, "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")  # fmt: skip
    for size, label in ((0, "replayed at every step"), (kept, f"kept referees ({kept})")):
        answers, steps, cpu, refereeing = (total / args.games for total in totals[size])
        per_step = cpu / steps * 1000
        print(
            f"{label:>26}: {answers:.0f} answers/game, {cpu * 1000:.0f} ms CPU/game "
            f"(the referee's {refereeing * 1000:.0f} ms), {per_step:.2f} ms CPU/step"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games (seeds) per mode")
    parser.add_argument("--players", type=int, choices=(2, 4), default=2)
    parser.add_argument("--target", type=int, default=21, help="the ruleset's target score")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
