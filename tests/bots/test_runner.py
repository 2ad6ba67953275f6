"""Whole games between real loopback bots: logs that replay, the fault policy, concurrency."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from games.engine import Game, Move, Ruleset, replay_log
from games.faults import fallback_move
from tests.fakebots.simple import SimpleBot
from tournaments.bot_calls.caller import Caller
from tournaments.bot_calls.runner import BotEndpoint, GameRecord, play_game, play_game_sync

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def endpoint(servers, bot: SimpleBot, name: str) -> BotEndpoint:
    return BotEndpoint(
        url=f"http://127.0.0.1:{servers.start_app(bot.app())}/", secret=bot.secret, name=name
    )


def run(
    ruleset: Ruleset,
    bots: list[BotEndpoint],
    *,
    seed: int = 7,
    timeout_ms: int = 1000,
    max_faults: int = 5,
    anonymous: bool = False,
) -> GameRecord:
    async def main() -> GameRecord:
        async with Caller(allow_private=True) as caller:
            return await play_game(
                ruleset=ruleset,
                seed=seed,
                bots=bots,
                game_id="g1",
                timeout_ms=timeout_ms,
                max_faults=max_faults,
                caller=caller,
                log_url="https://example.org/games/g1/log",
                anonymous=anonymous,
            )

    return asyncio.run(main())


def plays_of(record: GameRecord) -> list[dict]:
    return [play for game_round in record.log["rounds"] for play in game_round["plays"]]


def move_of(play: dict) -> Move:
    return Move.from_wire({"card": play["card"], "capture": play["capture"]})


def test_full_game_between_loopback_bots_replays(servers):
    first, second = SimpleBot(secret=SECRET), SimpleBot(secret=SECRET)
    ruleset = Ruleset.from_preset("classic", {})
    record = run(ruleset, [endpoint(servers, first, "one"), endpoint(servers, second, "two")])

    replayed = replay_log(record.log)
    assert replayed.is_over and replayed.log() == record.log
    assert record.result["reason"] == "target"
    assert record.faults == []
    assert [len(r["plays"]) for r in record.log["rounds"]] == [len(m) for m in record.meta]
    assert all(m["fault"] is None and m["latency_ms"] > 0 for r in record.meta for m in r)
    # The log is what playing every bot's own first legal move gives.
    game = Game.new(ruleset, seed=7)
    while not game.is_over:
        game.apply(game.legal_moves()[0])
    assert game.log() == record.log
    for bot, seat in ((first, 0), (second, 1)):
        paths = [seen.path for seen in bot.seen]
        assert paths[0] == "start" and paths[-1] == "end"
        assert set(paths[1:-1]) == {"move"}
        assert {seen.body["you"]["seat"] for seen in bot.seen} == {seat}
        end = bot.seen[-1].body
        assert end["result"]["winner"] == record.result["winner"]
        assert end["log_url"] == "https://example.org/games/g1/log"
    assert orjson.loads(orjson.dumps(record.to_dict())) == record.to_dict()


def test_move_requests_carry_the_rounds_lucky_deal(servers):
    first, second = SimpleBot(), SimpleBot()
    ruleset = Ruleset.from_preset("classic", {})
    # Seed 10 opens with a lucky deal for the dealer, seat 0.
    record = run(
        ruleset, [endpoint(servers, first, "one"), endpoint(servers, second, "two")], seed=10
    )
    lucky_by_round = [game_round["lucky_deal"] for game_round in record.log["rounds"]]
    assert lucky_by_round[0] == {"seat": 0, "cards": ["1c", "2e", "3e", "9o"], "escobas": 1}
    requests = [seen.body for bot in (first, second) for seen in bot.moves_seen()]
    assert requests
    for request in requests:
        assert request["lucky_deal"] == lucky_by_round[request["round"] - 1]


def test_one_bot_fields_both_seats_of_a_team_and_sees_only_its_seats_hand(servers):
    team_bot, other = SimpleBot(), SimpleBot()
    a, b = endpoint(servers, team_bot, "pair"), endpoint(servers, other, "rival")
    ruleset = Ruleset.from_preset("classic", {"players": 4, "teams": True, "target": 1})
    record = run(ruleset, [a, b, a, b], seed=3)
    assert record.faults == []

    pending = {0: iter(team_bot.moves_seen()), 1: iter(other.moves_seen())}
    game = Game.new(ruleset, seed=3)
    for play in plays_of(record):
        seat = game.current_seat
        request = next(pending[seat % 2]).body
        assert request["you"]["seat"] == seat
        assert request["you"]["hand"] == [str(card) for card in game.hand(seat)]
        game.apply(move_of(play))
    assert game.log() == record.log


def test_faulting_bot_forfeits_after_max_faults(servers):
    good, cheat = SimpleBot(), SimpleBot(mode="not-in-hand")
    ruleset = Ruleset.from_preset("classic", {})
    record = run(
        ruleset, [endpoint(servers, good, "good"), endpoint(servers, cheat, "cheat")], max_faults=2
    )
    assert [fault["seat"] for fault in record.faults] == [1, 1, 1]
    assert {fault["kind"] for fault in record.faults} == {"illegal_move"}
    assert all(fault["detail"].startswith("card_not_in_hand") for fault in record.faults)
    assert record.result["reason"] == "forfeit"
    assert record.result["forfeit_seat"] == 1 and record.result["winner"] == 0
    # The third fault ended the game before its play: two fallbacks were played for seat 1.
    faulted = [m for r in record.meta for m in r if m["fault"]]
    assert len(faulted) == 2
    assert replay_log(record.log).result.reason == "forfeit"
    assert cheat.seen[-1].path == "end"


def test_each_play_comes_with_its_facts(servers):
    """The runner's calls carry the play they made beside the latency and the fault: no list
    to join by index. The stored forms (meta, faults) are derived from them."""
    good, cheat = SimpleBot(), SimpleBot(mode="not-in-hand")
    ruleset = Ruleset.from_preset("classic", {})
    record = run(
        ruleset, [endpoint(servers, good, "good"), endpoint(servers, cheat, "cheat")], max_faults=2
    )
    plays = plays_of(record)
    assert [(call.seat, call.move) for call in record.plays] == [
        (play["seat"], move_of(play)) for play in plays
    ]
    for call in record.plays:
        play = record.log["rounds"][call.round - 1]["plays"][call.play - 1]
        assert (play["seat"], move_of(play)) == (call.seat, call.move)
        assert record.meta[call.round - 1][call.play - 1] == call.meta()
        assert call.meta()["seat"] == call.seat
    [last] = [call for call in record.calls if call.move is None]
    assert last is record.calls[-1] and last.fault is not None and last.seat == 1
    assert record.faults[-1] == {
        "seat": 1,
        "round": last.round,
        "play": last.play,
        **last.fault.to_dict(),
    }


def test_faulting_move_is_replaced_by_the_fallback(servers):
    good, stray = SimpleBot(), SimpleBot(mode="off-table")
    ruleset = Ruleset.from_preset("classic", {"target": 1})
    record = run(
        ruleset,
        [endpoint(servers, good, "good"), endpoint(servers, stray, "stray")],
        max_faults=1000,
    )
    assert record.result["reason"] != "forfeit"
    game = Game.new(ruleset, seed=7)
    metas = [m for r in record.meta for m in r]
    for play, meta in zip(plays_of(record), metas, strict=True):
        move = move_of(play)
        if play["seat"] == 1:
            assert meta["fault"] == "illegal_move"
            assert meta["detail"].startswith("cards_not_on_table")
            assert move == fallback_move(game.legal_moves())
        else:
            assert meta["fault"] is None
            assert move == game.legal_moves()[0]
        game.apply(move)
    assert len(record.faults) == len([p for p in plays_of(record) if p["seat"] == 1])


def test_silent_bot_forfeits_within_its_deadlines(servers, hostile):
    base, _ = hostile
    good = SimpleBot()
    ruleset = Ruleset.from_preset("classic", {})
    started = time.perf_counter()
    record = run(
        ruleset,
        [BotEndpoint(f"{base}/silent/", name="silent"), endpoint(servers, good, "good")],
        timeout_ms=100,
        max_faults=1,
    )
    seconds = time.perf_counter() - started
    assert [fault["kind"] for fault in record.faults] == ["timeout", "timeout"]
    assert record.result["forfeit_seat"] == 0
    # start notice, two moves and the end notice each wait at most 100 ms
    assert seconds < 4 * 0.1 + 0.5


def test_refused_address_faults_every_move(servers):
    good = SimpleBot()
    ruleset = Ruleset.from_preset("classic", {})
    bots = [endpoint(servers, good, "good"), BotEndpoint("http://169.254.169.254/", name="meta")]
    record = run(ruleset, bots, max_faults=0)
    assert [(f["seat"], f["kind"]) for f in record.faults] == [(1, "address")]
    assert record.result["forfeit_seat"] == 1


def test_many_games_run_concurrently_in_one_loop(servers):
    bots = [SimpleBot(delay=0.02) for _ in range(2)]
    endpoints = [endpoint(servers, bot, f"slow{i}") for i, bot in enumerate(bots)]
    ruleset = Ruleset.from_preset("classic", {"target": 1})

    async def main() -> list[GameRecord]:
        async with Caller(allow_private=True) as caller:
            return await asyncio.gather(
                *(
                    play_game(
                        ruleset=ruleset,
                        seed=seed,
                        bots=endpoints,
                        game_id=seed,
                        timeout_ms=2000,
                        caller=caller,
                    )
                    for seed in range(12)
                )
            )

    started = time.perf_counter()
    records = asyncio.run(main())
    seconds = time.perf_counter() - started
    moves = sum(len(plays_of(record)) for record in records)
    assert all(record.faults == [] for record in records)
    assert [record.log["seed"] for record in records] == list(range(12))
    # One after another these moves would take moves * 20 ms.
    assert seconds < moves * 0.02 / 3


def test_sync_wrapper(servers):
    first, second = SimpleBot(), SimpleBot()
    record = play_game_sync(
        allow_private=True,
        ruleset=Ruleset.from_preset("classic", {"target": 1}),
        seed=1,
        bots=[endpoint(servers, first, "a"), endpoint(servers, second, "b")],
        game_id=1,
        timeout_ms=1000,
    )
    assert replay_log(record.log).is_over


def test_wrong_number_of_bots_is_a_programming_error():
    with pytest.raises(ValueError, match="2 seats but 1 bots"):
        asyncio.run(
            play_game(
                ruleset=Ruleset.from_preset("classic", {}),
                seed=1,
                bots=[BotEndpoint("http://bot.example.com/")],
                game_id=1,
                timeout_ms=100,
                caller=Caller(),
            )
        )


def names_seen(bot: SimpleBot, path: str) -> set[tuple[str, ...]]:
    return {tuple(s["name"] for s in seen.body["seats"]) for seen in bot.seen if seen.path == path}


def test_an_anonymous_game_names_no_bot_to_its_bots(servers):
    """Rated play: the start notice, every move request and the end notice call the seats
    `seat 0`, `seat 1` (the set's other game, with the same opponents, may still be in play);
    no body carries a name or anything but the game's own id."""
    first, second = SimpleBot(secret=SECRET), SimpleBot(secret=SECRET)
    ruleset = Ruleset.from_preset("classic", {})
    bots = [endpoint(servers, first, "ana"), endpoint(servers, second, "bea")]
    run(ruleset, bots, anonymous=True)
    for bot in (first, second):
        assert names_seen(bot, "start") == names_seen(bot, "move") == {("seat 0", "seat 1")}
        assert names_seen(bot, "end") == {("seat 0", "seat 1")}
        raw = b"".join(orjson.dumps(seen.body) for seen in bot.seen)
        assert b"ana" not in raw and b"bea" not in raw
        assert {(seen.body["game"]["id"], seen.body["game"]["match_id"]) for seen in bot.seen} == {
            ("g1", "g1")
        }


def test_a_named_game_names_its_bots_throughout(servers):
    first, second = SimpleBot(secret=SECRET), SimpleBot(secret=SECRET)
    ruleset = Ruleset.from_preset("classic", {})
    run(ruleset, [endpoint(servers, first, "ana"), endpoint(servers, second, "bea")])
    assert names_seen(first, "start") == names_seen(first, "move") == {("ana", "bea")}


def test_each_partnership_seat_gets_only_its_own_hand(servers):
    """Four different bots at a partnership table: every request a bot gets is for its own seat
    and shows a hand dealt to that seat, never its partner's cards."""
    bots = [SimpleBot(secret=SECRET) for _ in range(4)]
    ruleset = Ruleset.from_preset("classic", {"players": 4, "teams": True})
    record = run(ruleset, [endpoint(servers, bot, f"b{n}") for n, bot in enumerate(bots)])
    for seat, bot in enumerate(bots):
        moves = [seen.body for seen in bot.seen if seen.path == "move"]
        assert moves and {body["you"]["seat"] for body in moves} == {seat}
        for body in moves:
            dealt = {
                card
                for deal in record.log["rounds"][body["round"] - 1]["deals"]
                for card in deal[seat]
            }
            partner_dealt = {
                card
                for deal in record.log["rounds"][body["round"] - 1]["deals"]
                for card in deal[(seat + 2) % 4]
            }
            assert set(body["you"]["hand"]) <= dealt
            assert not set(body["you"]["hand"]) & partner_dealt
