"""Rows for page tests that need a game of a given ruleset or state, without playing a league."""

from __future__ import annotations

from tournaments.models import Bot, Game, GameLog, League, Match, Seat


def stored_game(
    owner, *, ruleset: dict, seed: int, log: dict | None = None, names=("keeper", "giver")
) -> Game:
    """A game between two new bots (named ``names``) in a league of ``ruleset``: finished with
    ``log`` if given, otherwise aborted (stopped before it finished, so without result or log)."""
    bots = [
        Bot.objects.create(owner=owner, name=name, url=f"http://127.0.0.1:9/{name}", secret="x")
        for name in names
    ]
    league = League.objects.create(
        # League names are unique: one league per stored game.
        name=f"{ruleset['name']} rules, {' v '.join(names)}, seed {seed}",
        creator=owner,
        ruleset=ruleset,
        pool=f"{ruleset['name']}/2p",
        players=2,
        seed=seed,
        status=League.Status.FINISHED,
        rated=False,
    )
    # A set that is over: a set still in play publishes no log (Match.sealed).
    match = Match.objects.create(
        league=league, number=1, round=1, seed=seed, status=Match.Status.FINISHED
    )
    game = Game.objects.create(
        league=league, match=match, number=1, seed=seed, seating=[bot.pk for bot in bots]
    )
    if log is None:
        game.status, game.reason = Game.Status.ABORTED, "match time limit"
    else:
        result = log["result"]
        game.status = Game.Status.FINISHED
        game.winner, game.totals, game.reason = result["winner"], result["totals"], result["reason"]
    game.save()
    if log is not None:
        GameLog.objects.create(game=game, document=log)
    for seat, bot in enumerate(bots):
        Seat.objects.create(game=game, seat=seat, team=seat, bot=bot)
    return game
