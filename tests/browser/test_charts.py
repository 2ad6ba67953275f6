"""The server-drawn Elo chart and the card faces: plain functions, no browser, no database."""

import pytest

from web.templatetags.charts import HEIGHT, LEFT, WIDTH, chart_points, rating_chart


def test_chart_draws_one_point_per_rating_left_to_right():
    ratings = [1500, 1516, 1502.5, 1530, 1489]
    svg = rating_chart(ratings)
    points = chart_points(svg)
    assert len(points) == len(ratings)
    xs = [x for x, _ in points]
    assert xs == sorted(xs) and xs[0] == LEFT and xs[-1] < WIDTH
    assert 'data-points="5"' in svg


def test_chart_puts_higher_ratings_higher_on_screen():
    ratings = [1500, 1516, 1502.5, 1530, 1489]
    ys = [y for _, y in chart_points(rating_chart(ratings))]
    ranked_by_height = sorted(range(len(ys)), key=lambda i: ys[i])
    ranked_by_rating = sorted(range(len(ratings)), key=lambda i: -ratings[i])
    assert ranked_by_height == ranked_by_rating
    assert all(0 <= y <= HEIGHT for y in ys)


def test_chart_describes_itself_for_screen_readers():
    svg = rating_chart([1500, 1540, 1520], title="Elo of <greedy>")
    assert 'role="img"' in svg
    assert '<title id="chart-title">Elo of &lt;greedy&gt;</title>' in svg
    assert "2 rated games; from 1500 to 1520, lowest 1500, highest 1540." in svg


@pytest.mark.parametrize("ratings", [[], [1500]])
def test_chart_without_games_says_so(ratings):
    assert "No rated games yet." in rating_chart(ratings)
    assert "<svg" not in rating_chart(ratings)


def test_chart_of_a_flat_rating_still_has_a_scale():
    points = chart_points(rating_chart([1500, 1500, 1500]))
    assert len({y for _, y in points}) == 1
