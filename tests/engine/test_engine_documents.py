"""Every worked example and stated fact of the rule documents A to D, as a test.

Document slips (D's "thirteen cards", D's primera "maximum 70", A's leftover list) are tested as
the corrected fact; docs/rules.md records them.
"""

import pytest
from engine_positions import cards, classic, position

from games.engine import Card, Game, IllegalMoveError, Move, Ruleset
from games.engine.cards import cards_of_mask
from games.engine.scoring import best_cards, score_round
from games.engine.state import round_outcome


def mask(text: str) -> int:
    return sum(1 << card.index for card in cards(text))


def everything_but(*texts: str) -> int:
    return (1 << 40) - 1 - sum(mask(text) for text in texts)


def moves(texts):
    return [Move.from_str(text) for text in texts]


def first_seed_with_lucky_deal(escobas: int, players: int = 2) -> tuple[int, Game]:
    ruleset = Ruleset.from_preset("classic", {"players": players})
    for seed in range(20_000):
        game = Game.new(ruleset, seed)
        lucky = game.log()["rounds"][0]["lucky_deal"]
        if lucky and lucky["escobas"] == escobas:
            return seed, game
    raise AssertionError("no lucky deal found")


# -- Document A ------------------------------------------------------------------------------


def test_a_four_played_on_ace_three_four_seven_offers_both_captures():
    game = position(classic(), ["4c 9c 2o", "5c"], "1e 3c 4b 7o")
    assert game.legal_moves() == moves(["2o", "4c:1e+3c+7o", "4c:4b+7o", "9c"])
    with pytest.raises(IllegalMoveError) as caught:
        game.apply(Move.from_str("4c"))
    assert caught.value.code == "must_capture"
    game.apply(Move.from_str("4c:4b+7o"))
    assert game.table == cards("1e 3c")


def test_a_queen_needing_six_stays_on_the_table():
    game = position(classic(), ["9c", "5c"], "1e 3c 4b 7o")
    assert game.legal_moves() == moves(["9c"])
    game.apply(Move.from_str("9c"))
    assert game.table == cards("1e 3c 4b 7o 9c")


def test_a_setenta_example_anna_beats_ben_with_her_six():
    anna, ben = mask("7e 7c 6o 5b"), mask("7o 7b 1e 1c")
    assert sorted(best_cards(anna), reverse=True) == [21, 21, 18, 15]
    assert sorted(best_cards(ben), reverse=True) == [21, 21, 16, 16]
    score = score_round(classic().options, [anna, ben], [0, 0])
    assert score[0]["points"]["sevens"] == 1
    assert score[1]["points"]["sevens"] == 0


def test_a_example_round_anna_four_points_ben_two():
    ben = mask("5o 6o 7o 8o 9o 10o 1c 1e 1b 2c 2e 2b 3c 3e 3b 4c 4e")
    anna = everything_but("5o 6o 7o 8o 9o 10o 1c 1e 1b 2c 2e 2b 3c 3e 3b 4c 4e")
    anna_score, ben_score = score_round(classic().options, [anna, ben], [2, 0])
    assert (anna_score["cards"], anna_score["oros"], anna_score["escobas"]) == (23, 4, 2)
    assert anna_score["points"] == {
        "cards": 1, "oros": 0, "seven_of_oros": 0, "sevens": 1, "escobas": 2,
    }  # fmt: skip
    assert anna_score["total"] == 4
    assert (ben_score["oros"], ben_score["seven_of_oros"]) == (6, True)
    assert ben_score["total"] == 2


@pytest.mark.parametrize("escobas", [1, 2])
def test_a_b_c_lucky_deal_dealer_takes_the_table(escobas):
    seed, game = first_seed_with_lucky_deal(escobas)
    first_round = game.log()["rounds"][0]
    lucky = first_round["lucky_deal"]
    assert lucky["seat"] == game.dealer == 0
    assert sum(Card.from_str(text).value for text in lucky["cards"]) == 15 * escobas
    assert lucky["cards"] == first_round["table"]
    assert game.table == []
    view = game.view(0)
    assert view.seats[0].escobas == escobas and view.seats[0].captured == 4


def test_a_no_lucky_deal_when_the_table_is_not_15_or_30():
    game = Game.new(classic(), 0)
    first_round = game.log()["rounds"][0]
    worth = sum(Card.from_str(text).value for text in first_round["table"])
    assert worth not in (15, 30)
    assert first_round["lucky_deal"] is None
    assert len(game.table) == 4


@pytest.mark.parametrize(("players", "deals"), [(2, 6), (3, 4), (4, 3)])
def test_a_d_deals_until_the_deck_is_used_up(players, deals):
    """A: 6, 4 or 3 deals. D's "thirteen cards" for two players is a slip: it is 18."""
    game = Game.new(Ruleset.from_preset("classic", {"players": players}), 3)
    while game.round == 1:
        game.apply(game.legal_moves()[0])
    first_round = game.log()["rounds"][0]
    assert len(first_round["deals"]) == deals
    per_seat = 3 * deals
    assert per_seat == {2: 18, 3: 12, 4: 9}[players]
    for seat in range(players):
        assert sum(len(deal[seat]) for deal in first_round["deals"]) == per_seat


def test_a_leftover_goes_to_the_last_capturer_and_is_no_escoba():
    game = position(classic(), ["10o", "3c"], "5e")
    game.apply(Move.from_str("10o:5e"))
    game.apply(Move.from_str("3c"))
    last_round = game.log()["rounds"][0]
    assert last_round["plays"][-2:] == [
        {"seat": 0, "card": "10o", "capture": ["5e"], "escoba": True},
        {"seat": 1, "card": "3c", "capture": [], "escoba": False},
    ]
    assert last_round["leftover"] == {"seat": 0, "cards": ["3c"]}
    assert last_round["score"][0]["escobas"] == 1
    assert last_round["score"][0]["cards"] == 3


@pytest.mark.parametrize(("seed", "worth"), [(7004, 70), (15581, 85)])
def test_a_leftover_of_70_and_85_occurs_under_forced_capture(seed, worth):
    """A's "10, 25, 40 or 55" is a slip: these classic rounds (each seat plays its last trail
    when it has one, else its last legal move) leave 70 and 85 on the table."""
    game = Game.new(classic(), seed)
    while game.round == 1:
        legal = game.legal_moves()
        trails = [move for move in legal if not move.capture]
        game.apply((trails or legal)[-1])
    leftover = game.log()["rounds"][0]["leftover"]["cards"]
    assert sum(Card.from_str(text).value for text in leftover) == worth


def test_b_a_round_where_everyone_trails_leaves_all_220_to_the_dealer():
    """With optional capture nothing needs to be taken: the leftover is then the whole deck (less
    a lucky deal), still 10 more than a multiple of 15, and with no capture the dealer takes it."""
    game = Game.new(Ruleset.from_preset("casual"), 0)
    assert game.log()["rounds"][0]["lucky_deal"] is None
    while game.round == 1:
        game.apply(next(move for move in game.legal_moves() if not move.capture))
    first_round = game.log()["rounds"][0]
    assert first_round["leftover"]["seat"] == first_round["dealer"] == 0
    assert len(first_round["leftover"]["cards"]) == 40
    assert first_round["score"][0]["cards"] == 40


def test_a_ties_score_nothing():
    """20-20 cards, 5-5 oros and an equal setenta: only the 7 of oros and escobas score."""
    left = mask("1o 2o 3o 4o 5o 7c 7e 6c 6e") | mask("1c 2c 3c 4c 5c 8c 9c 10c 5e 2e 3e")
    right = everything_but(_texts(left))
    score = score_round(classic().options, [left, right], [0, 0])
    assert [side["cards"] for side in score] == [20, 20]
    assert [side["oros"] for side in score] == [5, 5]
    assert sorted(best_cards(left), reverse=True) == sorted(best_cards(right), reverse=True)
    assert [side["total"] for side in score] == [0, 1]


def test_a_both_sides_pass_the_target_the_higher_wins_a_tie_plays_on():
    options = classic().options
    result = round_outcome(options, [23, 22], 5)
    assert (result.winner, result.reason) == (0, "target")
    assert round_outcome(options, [22, 22], 5) is None
    assert round_outcome(options, [20, 19], 5) is None


def test_a_fournier_sevens_only_two_each_is_a_tie():
    fournier = Ruleset.from_preset("fournier").options
    tie = score_round(fournier, [mask("7o 7c"), mask("7e 7b")], [0, 0])
    assert [side["points"]["sevens"] for side in tie] == [0, 0]
    win = score_round(fournier, [mask("7o 7c 7e 1o"), mask("7b 6o 6c 6e")], [0, 0])
    assert [side["points"]["sevens"] for side in win] == [1, 0]


def test_a_old_setenta_adds_the_best_card_of_each_suit_and_needs_all_four_suits():
    primera = Ruleset.from_preset("primera").options
    full = mask("7o 6c 1e 5b")  # 21 + 18 + 16 + 15 = 70
    sevens_missing_a_suit = mask("7o 7c 7e")
    assert sum(best_cards(full)) == 70
    score = score_round(primera, [full, sevens_missing_a_suit], [0, 0])
    assert [side["points"]["sevens"] for side in score] == [1, 0]


def test_a_big_wins_thirty_cards_against_under_ten_score_two():
    options = Ruleset.from_preset("classic", {"big_wins": True}).options
    small = mask("1c 2c 3c 4c 5c 6c 8c 9c 10c")  # 9 cards
    score = score_round(options, [everything_but(_texts(small)), small], [0, 0])
    assert score[0]["cards"] == 31
    assert score[0]["points"]["cards"] == 2
    assert score[0]["points"]["oros"] == 2  # all ten oros
    assert score[0]["points"]["sevens"] + score[0]["points"]["seven_of_oros"] == 3


def test_a_big_wins_needs_every_opponent_under_ten():
    options = Ruleset.from_preset("classic", {"big_wins": True}).options
    ten = mask("1c 2c 3c 4c 5c 6c 8c 9c 10c 1e")
    score = score_round(options, [everything_but(_texts(ten)), ten], [0, 0])
    assert score[0]["points"]["cards"] == 1


def test_a_without_big_wins_all_oros_and_sevens_score_as_usual():
    small = mask("1c 2c 3c 4c 5c 6c 8c 9c 10c")
    score = score_round(classic().options, [everything_but(_texts(small)), small], [0, 0])
    assert score[0]["points"] == {
        "cards": 1, "oros": 1, "seven_of_oros": 1, "sevens": 1, "escobas": 0,
    }  # fmt: skip


# -- Document B ------------------------------------------------------------------------------


def test_b_ace_sota_and_six_make_fifteen():
    game = position(Ruleset.from_preset("casual"), ["6c", "2c"], "1o 8e")
    assert Move.from_str("6c:1o+8e") in game.legal_moves()


def test_b_casual_may_trail_a_card_that_could_capture():
    game = position(Ruleset.from_preset("casual"), ["6c", "2c"], "1o 8e")
    assert game.legal_moves() == moves(["6c:1o+8e", "6c"])
    game.apply(Move.from_str("6c"))
    assert game.table == cards("1o 6c 8e")


def test_b_four_players_play_one_and_three_against_two_and_four():
    game = Game.new(Ruleset.from_preset("casual", {"players": 4}), 5)
    assert [seat["team"] for seat in game.log()["seats"]] == [0, 1, 0, 1]


def test_b_player_one_deals_first_and_the_deal_passes_on():
    game = Game.new(classic(), 11)
    assert (game.dealer, game.current_seat) == (0, 1)
    while game.round == 1:
        game.apply(game.legal_moves()[-1])
    assert (game.dealer, game.current_seat) == (1, 0)


def test_b_most_sevens_scores_the_sevens_point():
    casual = Ruleset.from_preset("casual").options
    score = score_round(casual, [mask("7o 7c 7e"), mask("7b 6o 6c 6e 1o")], [0, 0])
    assert [side["points"]["sevens"] for side in score] == [1, 0]


# -- Document C ------------------------------------------------------------------------------


def test_c_rule_five_a_card_that_captures_must_capture():
    game = position(Ruleset.from_preset("bonus"), ["6c 2c", "3c"], "1o 8e")
    assert game.legal_moves() == moves(["2c", "6c:1o+8e"])
    with pytest.raises(IllegalMoveError, match="must_capture"):
        game.apply(Move.from_str("6c"))


def test_c_all_coins_score_two_points():
    bonus = Ruleset.from_preset("bonus").options
    oros = mask("1o 2o 3o 4o 5o 6o 7o 8o 9o 10o")
    score = score_round(bonus, [oros, everything_but(_texts(oros))], [0, 0])
    assert score[0]["points"]["oros"] == 2


def test_c_all_four_sevens_score_three_including_the_seven_of_coins():
    bonus = Ruleset.from_preset("bonus").options
    sevens = mask("7o 7c 7e 7b")
    score = score_round(bonus, [sevens, everything_but(_texts(sevens))], [0, 0])
    assert score[0]["points"]["sevens"] + score[0]["points"]["seven_of_oros"] == 3
    three = score_round(bonus, [mask("7o 7c 7e"), mask("7b")], [0, 0])
    assert three[0]["points"]["sevens"] + three[0]["points"]["seven_of_oros"] == 2


# -- Document D ------------------------------------------------------------------------------


def test_d_cards_need_more_than_twenty_and_coins_more_than_five():
    del15 = Ruleset.from_preset("del15").options
    left = mask("1o 2o 3o 4o 5o 7c 7e 6c 6e") | mask("1c 2c 3c 4c 5c 8c 9c 10c 1e 2e 3e")
    even = score_round(del15, [left, everything_but(_texts(left))], [0, 0])
    assert [side["points"]["cards"] for side in even] == [0, 0]
    assert [side["points"]["oros"] for side in even] == [0, 0]
    more = left | mask("6o")
    score = score_round(del15, [more, everything_but(_texts(more))], [0, 0])
    assert score[0]["cards"] == 21 and score[0]["points"]["cards"] == 1
    assert score[0]["oros"] == 6 and score[0]["points"]["oros"] == 1


def test_d_over_half_with_three_sides_can_leave_the_point_unscored():
    del15 = Ruleset.from_preset("del15", {"players": 3}).options
    piles = [mask("1o 2o 3o 4o 5o"), mask("6o 7o 8o"), mask("9o 10o")]
    score = score_round(del15, piles, [0, 0, 0])
    assert [side["points"]["oros"] for side in score] == [0, 0, 0]
    fournier = Ruleset.from_preset("fournier", {"players": 3}).options
    assert score_round(fournier, piles, [0, 0, 0])[0]["points"]["oros"] == 1


def test_d_primera_missing_suit_loses_equal_totals_score_nothing_maximum_is_84():
    del15 = Ruleset.from_preset("del15").options
    four_sevens = mask("7o 7c 7e 7b")
    assert sum(best_cards(four_sevens)) == 84  # D's "maximum is 70" is a slip
    missing = score_round(del15, [mask("7o 7c 7e"), mask("1o 1c 1e 1b")], [0, 0])
    assert [side["points"]["sevens"] for side in missing] == [0, 1]
    equal = score_round(del15, [mask("7o 6c 1e 5b"), mask("7c 6o 1b 5e")], [0, 0])
    assert [side["points"]["sevens"] for side in equal] == [0, 0]
    nobody = score_round(del15, [mask("7o 7c 7e"), mask("7b 6b")], [0, 0])
    assert [side["points"]["sevens"] for side in nobody] == [0, 0]


def test_d_at_most_four_category_points_plus_sweeps():
    del15 = Ruleset.from_preset("del15").options
    score = score_round(del15, [everything_but(""), 0], [3, 1])
    assert score[0]["total"] == 4 + 3
    assert score[1]["total"] == 1


def test_d_variations_seven_of_coins_two_per_suit_sevens_and_no_primera():
    two = Ruleset.from_preset("del15", {"seven_of_oros": 2}).options
    assert score_round(two, [mask("7o"), mask("1o")], [0, 0])[0]["points"]["seven_of_oros"] == 2
    per_suit = Ruleset.from_preset("del15", {"sevens": "per_suit"}).options
    score = score_round(per_suit, [mask("7o 7c 7e"), mask("7b")], [0, 0])
    assert [side["points"]["sevens"] for side in score] == [3, 1]
    none = Ruleset.from_preset("del15", {"sevens": "none"}).options
    score = score_round(none, [mask("7o 7c 7e 7b 6o"), mask("1b")], [0, 0])
    assert [side["points"]["sevens"] for side in score] == [0, 0]


def test_d_a_genuine_tie_plays_one_more_deal_or_is_shared_in_the_app():
    assert round_outcome(Ruleset.from_preset("del15").options, [21, 21], 4) is None
    shared = Ruleset.from_preset("del15", {"tie": "shared"}).options
    result = round_outcome(shared, [21, 21], 4)
    assert (result.winner, result.reason, result.totals) == (None, "shared", [21, 21])


def _texts(pile: int) -> str:
    return " ".join(str(card) for card in cards_of_mask(pile))
