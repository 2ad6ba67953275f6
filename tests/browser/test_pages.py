"""The browser pages in a real browser, on real data from a real small league."""

import re
from collections import Counter
from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from games.engine import Game as EngineGame
from games.engine import Move, Ruleset
from tests.browser.data import stored_game
from tournaments.models import Game, Rating, RatingPoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

PASSWORD = "carmens-long-pass-42"


def _tables_after_plays(log: dict) -> dict[tuple[int, int], list[str]]:
    """The table after every play that is not a round's last, replayed by the engine itself."""
    game = EngineGame.new(Ruleset.from_dict(log["ruleset"]), seed=log["seed"])
    tables = {}
    for r, round_log in enumerate(log["rounds"], start=1):
        for p, play in enumerate(round_log["plays"], start=1):
            game.apply(Move.from_wire({"card": play["card"], "capture": play["capture"]}))
            if p < len(round_log["plays"]):
                tables[(r, p)] = sorted(str(card) for card in game.table)
    return tables


def _first_play(log: dict, *, escoba: bool) -> tuple[int, int]:
    """The first capture (a sweep if ``escoba``) that is not the last play of its round."""
    for r, round_log in enumerate(log["rounds"], start=1):
        plays = round_log["plays"]
        for p, play in enumerate(plays[:-1], start=1):
            if play["capture"] and play["escoba"] == escoba:
                return r, p
    raise AssertionError("no such play in this game")


def _focus_viewer(page) -> None:
    """Put keyboard focus in the replay viewer (its keys work only there): on its Play button."""
    page.locator('[data-go="play"]').focus()


def _table_cards(page) -> list[str]:
    return sorted(page.locator("[data-part=table]").get_attribute("data-cards").split())


def _game_with_sweep() -> Game:
    for game in Game.objects.filter(status=Game.Status.FINISHED).order_by("pk"):
        try:
            _first_play(game.log.document, escoba=True)
            _first_play(game.log.document, escoba=False)
        except AssertionError:
            continue
        return game
    raise AssertionError("no game of the league has a capture and a sweep mid-round")


def test_rankings_show_bots_in_elo_order(league_world, live_server, page, screenshot):
    world = league_world()
    expected = list(
        Rating.objects.filter(pool=world.league.pool)
        .order_by("-rating", "bot__name")
        .values_list("bot__name", flat=True)
    )
    assert len(expected) == 3
    page.goto(f"{live_server.url}/")
    rows = page.locator("[data-testid=rankings] tbody tr")
    expect(rows).to_have_count(3)
    names = [rows.nth(i).get_attribute("data-bot") for i in range(3)]
    elos = [float(rows.nth(i).get_attribute("data-elo")) for i in range(3)]
    assert names == expected
    assert elos == sorted(elos, reverse=True)
    screenshot(page, "rankings")

    page.get_by_label("Search bots").fill("gree")
    page.get_by_role("button", name="Show").click()
    expect(rows).to_have_count(1)
    assert rows.first.get_attribute("data-bot") == "greedy"


def test_league_progress_bar_advances_while_the_league_runs(
    worker_beside_live_server, league_world, live_server, page, screenshot
):
    """The league plays in a real Celery worker process while the page watches."""
    world = league_world(move_delay=0.01)
    page.goto(f"{live_server.url}/leagues/{world.league.pk}/")
    bar = page.locator("#league-live [role=progressbar]")
    # The schedule is written by the worker (leagues.schedule): the bar counts it once there.
    expect(bar).to_have_attribute("data-total", "6", timeout=60_000)
    total = 6
    seen = [int(bar.get_attribute("data-done"))]
    for _ in range(600):
        if seen[-1] == total:
            break
        page.wait_for_timeout(200)
        seen.append(int(bar.get_attribute("data-done")))
    assert seen[-1] == total, seen
    assert seen == sorted(seen), f"the bar went backwards: {seen}"
    assert any(0 < done < total for done in seen), f"no progress shown before the end: {seen}"
    expect(page.locator("#league-live [data-part=status]")).to_have_text("finished")
    width = page.locator("#league-live .progress-bar").evaluate("el => el.style.width")
    assert width == "100%"
    expect(page.locator("[data-testid=standings] tbody tr")).to_have_count(3)
    screenshot(page, "league")

    cell = page.locator(".crosstable td a").first
    expect(cell).to_have_text(re.compile(r"^[\d.]+/2$"))
    cell.click()
    expect(page.locator("table.data tbody tr")).to_have_count(2)
    screenshot(page, "league-games", phone=False)
    page.goto(f"{live_server.url}/leagues/")
    expect(page.get_by_role("link", name="Test league")).to_be_visible()
    screenshot(page, "leagues")


def test_replay_steps_by_keyboard_to_the_right_tables(league_world, live_server, page, screenshot):
    league_world()
    game = _game_with_sweep()
    tables = _tables_after_plays(game.log.document)
    page.goto(f"{live_server.url}/games/{game.pk}/")
    expect(page.locator("[data-part=step-label]")).to_have_text("Round 1, deal")
    first = game.log.document["rounds"][0]
    lucky = set(first["lucky_deal"]["cards"]) if first["lucky_deal"] else set()
    assert _table_cards(page) == sorted(set(first["table"]) - lucky)

    capture_round, capture_play = _first_play(game.log.document, escoba=False)
    page.goto(f"{live_server.url}/games/{game.pk}/#r{capture_round}p{capture_play - 1}")
    page.reload()
    _focus_viewer(page)
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(rf"#r{capture_round}p{capture_play}$"))
    assert _table_cards(page) == tables[(capture_round, capture_play)]
    expect(page.locator("[data-part=event]")).to_have_class(re.compile(r"\bcapture\b"))
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(re.compile(rf"#r{capture_round}p{capture_play - 1}$"))
    if capture_play > 1:
        assert _table_cards(page) == tables[(capture_round, capture_play - 1)]
    page.keyboard.press("ArrowRight")
    assert _table_cards(page) == tables[(capture_round, capture_play)]

    sweep_round, sweep_play = _first_play(game.log.document, escoba=True)
    page.goto(f"{live_server.url}/games/{game.pk}/#r{sweep_round}p{sweep_play - 1}")
    page.reload()
    _focus_viewer(page)
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(rf"#r{sweep_round}p{sweep_play}$"))
    assert _table_cards(page) == tables[(sweep_round, sweep_play)] == []
    expect(page.locator("[data-part=table-area]")).to_have_class(re.compile(r"\bswept\b"))
    expect(page.locator("[data-part=event]")).to_contain_text("Escoba")
    screenshot(page, "replay")

    raw = page.get_by_role("link", name="Raw log (JSON)").get_attribute("href")
    # exactly the escoba-log/1 document (gzip on the wire, which the browser's client accepts)
    assert page.request.get(f"{live_server.url}{raw}").json() == game.log.document

    if page.locator("[data-part=hand] .card").count() == 0:
        # The sweep was the last play of a deal: show the step before it, with cards in hand.
        _focus_viewer(page)
        page.keyboard.press("ArrowLeft")
    page.get_by_role("button", name="French deck").click()
    expect(page.locator("[data-replay]")).to_have_class(re.compile(r"\bdeck-french\b"))
    first_hand_card = page.locator("[data-part=hand] .card .french").first
    expect(first_hand_card).to_be_visible()
    assert re.fullmatch(r"(A|[2-7]|J|Q|K)[♦♥♠♣]", first_hand_card.inner_text())
    screenshot(page, "replay-french", phone=False)


@pytest.mark.parametrize("players", [3, 4])
def test_replay_of_three_seats_and_of_partnerships(
    players, league_world, live_server, page, screenshot
):
    league_world(players=players)
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    tables = _tables_after_plays(game.log.document)
    page.goto(f"{live_server.url}/games/{game.pk}/")
    expect(page.locator("[data-seat]")).to_have_count(players)
    steps = page.evaluate(
        "() => window.escobaReplay.steps.map(s => [s.kind, s.round, s.play, s.table])"
    )
    checked = 0
    for kind, r, p, table in steps:
        if kind == "play" and (r + 1, p) in tables:
            assert sorted(table) == tables[(r + 1, p)], (r + 1, p)
            checked += 1
    assert checked == len(tables)
    _focus_viewer(page)
    page.keyboard.press("End")
    expect(page.locator("[data-part=step-label]")).to_have_text(
        f"Round {len(game.log.document['rounds'])}, score"
    )
    teams = page.locator("[data-part=score-table] thead th")
    expect(teams).to_have_count(1 + (2 if players == 4 else 3))
    if players == 4:  # each bot fields both seats of its team: the team is named once
        seat_zero = game.seats.get(seat=0).bot.name
        expect(teams.nth(1)).to_have_text(seat_zero)
    page.goto(f"{live_server.url}/games/{game.pk}/#r1p5")
    page.reload()
    screenshot(page, f"replay-{players}p", phone=False)


def test_replay_page_shows_the_first_deal_without_its_script(league_world, client):
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    html = client.get(f"/games/{game.pk}/").content.decode()
    first = game.log.document["rounds"][0]
    lucky = set(first["lucky_deal"]["cards"]) if first["lucky_deal"] else set()
    table = html.split('data-part="table"', 1)[1].split("</div>", 1)[0]
    assert sorted(re.findall(r'data-card="(\w+)"', table)) == sorted(set(first["table"]) - lucky)
    for seat, hand in enumerate(first["deals"][0]):
        box = html.split(f'data-seat="{seat}"', 1)[1].split('data-part="stats"', 1)[0]
        assert sorted(re.findall(r'data-card="(\w+)"', box)) == sorted(hand)


# Which row of the breakdown carries the "sevens" point, by the ruleset's ``sevens`` option.
SEVENS_ROW = {"setenta": "setenta", "most": "sevens", "primera": "primera", "per_suit": "sevens"}
SCORE_CELLS = """() => Object.fromEntries(
  [...document.querySelectorAll("[data-part=score-table] tr[data-category]")].flatMap((tr) => [
    [`${tr.dataset.category}/label`, tr.querySelector("th").innerText],
    ...[...tr.querySelectorAll("td[data-team]")].map((td) => [
      `${tr.dataset.category}/${td.dataset.team}/${td.dataset.field || ""}`, td.innerText]),
  ]))"""


def _points(text: str | None) -> int:
    return int(text.lstrip("+")) if text else 0


def _check_score_breakdown(page, url: str, log: dict) -> list[dict[str, str]]:
    """Every round's breakdown as the viewer shows it equals the log's score, point for point.

    A doubled category (a bonus) may be shown as the category's point plus a bonus row's.
    Returns the cells of every round, for checks particular to a ruleset.
    """
    sevens_row = SEVENS_ROW.get(log["ruleset"]["options"]["sevens"])
    shown_rounds = []
    for r, round_log in enumerate(log["rounds"], start=1):
        page.goto(f"{url}#r{r}end")
        expect(page.locator("[data-part=score-title]")).to_have_text(f"Round {r} score")
        cells = page.evaluate(SCORE_CELLS)
        shown_rounds.append(cells)
        for team, score in enumerate(round_log["score"]):
            for key in ("cards", "oros", "sevens", "escobas"):
                assert cells[f"{key}/{team}/value"] == str(score[key]), (r, team, key)
            seven = "yes" if score["seven_of_oros"] else "no"
            assert cells[f"seven_of_oros/{team}/value"] == seven
            for key, points in score["points"].items():
                row = sevens_row if key == "sevens" else key
                if row is None:
                    assert points == 0, (r, team, key)
                    continue
                shown = _points(cells[f"{row}/{team}/points"])
                shown += _points(cells.get(f"bonus-{key}/{team}/points"))
                assert shown == points, (r, team, key)
            assert cells[f"total/{team}/"] == str(score["total"])
            assert cells[f"game/{team}/"].endswith(f"→ {round_log['totals'][team]}")
    return shown_rounds


def test_replay_score_breakdown_equals_the_log(league_world, live_server, page, screenshot):
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    url = f"{live_server.url}/games/{game.pk}/"
    page.goto(url)
    shown = _check_score_breakdown(page, url, game.log.document)
    assert all(cells["setenta/label"].startswith("Setenta") for cells in shown)
    best = re.compile(r"^((10|[1-9])[oceb]|–)( ((10|[1-9])[oceb]|–)){3}$")
    assert all(best.match(cells[f"setenta/{t}/value"]) for cells in shown for t in (0, 1))
    page.goto(f"{url}#r1end")
    page.locator("[data-part=score]").scroll_into_view_if_needed()
    screenshot(page, "replay-score", phone=False)


def _keeper_or_giver(game: EngineGame) -> Move:
    """Seat 0 takes all the oros and sevens it can, seat 1 gives them away: bonus material."""
    moves = game.legal_moves()

    def prize(move: Move) -> int:
        cards = (move.card, *move.capture) if move.capture else ()
        return sum(1 for card in cards if card.suit == "o" or card.value == 7)

    if game.current_seat == 0:
        return max(moves, key=lambda move: (prize(move), len(move.capture)))
    return min(moves, key=lambda move: (prize(move), len(move.capture)))


def _scripted_log(preset: str, wanted: Callable[[dict], bool]) -> dict:
    """The log of the first scripted game under ``preset`` in which ``wanted(score)`` holds."""
    for seed in range(500):
        game = EngineGame.new(Ruleset.from_preset(preset, {"target": 15}), seed=seed)
        while not game.is_over:
            game.apply(_keeper_or_giver(game))
        log = game.log()
        if any(wanted(score) for round_log in log["rounds"] for score in round_log["score"]):
            return log
    raise AssertionError(f"no scripted {preset} game scores as wanted")


def _scripted_breakdown(page, live_server, owner, preset: str, wanted: Callable[[dict], bool]):
    """Store the first scripted ``preset`` game where ``wanted(score)`` holds, check its every
    score breakdown against its log; return its replay URL and the cells of every round."""
    log = _scripted_log(preset, wanted)
    game = stored_game(owner, ruleset=log["ruleset"], seed=log["seed"], log=log)
    url = f"{live_server.url}/games/{game.pk}/"
    page.goto(url)
    return url, _check_score_breakdown(page, url, log)


def test_replay_shows_the_bonuses_of_the_bonus_rules(
    live_server, page, screenshot, transactional_db, django_user_model
):
    owner = django_user_model.objects.create_user(username="rules", password=PASSWORD)
    url, shown = _scripted_breakdown(
        page, live_server, owner, "bonus", lambda score: score["points"]["sevens"] == 2
    )
    bonus_rounds = [cells for cells in shown if "bonus-sevens/label" in cells]
    assert bonus_rounds, "the all-four-sevens bonus is not shown"
    assert bonus_rounds[0]["bonus-sevens/label"] == "Bonus: all four sevens"
    assert all(cells["sevens/label"] == "Most sevens" for cells in shown)
    page.goto(f"{url}#r{shown.index(bonus_rounds[0]) + 1}end")
    page.locator("[data-part=score]").scroll_into_view_if_needed()
    screenshot(page, "replay-score-bonus", phone=False)


def test_replay_names_the_del15_categories(live_server, page, transactional_db, django_user_model):
    owner = django_user_model.objects.create_user(username="rules", password=PASSWORD)
    _, shown = _scripted_breakdown(
        page, live_server, owner, "del15", lambda score: score["points"]["sevens"] == 1
    )
    for cells in shown:
        assert cells["cards/label"] == "Cards (more than 20)"
        assert cells["oros/label"] == "Oros (more than 5)"
        assert cells["primera/label"].startswith("Primera")
        assert "setenta/label" not in cells
    assert any(cells[f"primera/{t}/points"] == "+1" for cells in shown for t in (0, 1))


def test_replay_shows_faults_and_latency_on_their_play(league_world, live_server, page):
    league_world(flaky_every=25)
    game = Game.objects.filter(faults__gt=0).order_by("pk").first()
    assert game is not None, "the flaky bot made no fault"
    fault = game.log.faults[0]
    meta = game.log.meta[fault["round"] - 1][fault["play"] - 1]
    assert meta["fault"] == fault["kind"]
    page.goto(f"{live_server.url}/games/{game.pk}/#r{fault['round']}p{fault['play']}")
    event = page.locator("[data-part=event]")
    expect(event.locator(".fault")).to_contain_text(f"Fault: {fault['kind']}")
    if meta["latency_ms"] is not None:
        expect(event.locator(".latency")).to_have_text(f"Answered in {meta['latency_ms']:.1f} ms.")
    current = page.locator(".play-list a[aria-current=step]")
    expect(current.locator(".tag.fault")).to_be_visible()
    _focus_viewer(page)
    page.keyboard.press("ArrowLeft")
    expect(page.locator("[data-part=event] .fault")).to_have_count(
        1 if _has_fault(game, fault["round"], fault["play"] - 1) else 0
    )


def test_bot_profile_counts_faults_by_kind(league_world, live_server, page):
    world = league_world(flaky_every=25)
    flaky = world.bots[0]
    expected = Counter()
    for game in Game.objects.filter(seats__bot=flaky, faults__gt=0).distinct():
        seats = set(game.seats.filter(bot=flaky).values_list("seat", flat=True))
        expected.update(f["kind"] for f in game.log.faults if f["seat"] in seats)
    assert expected, "the flaky bot made no fault"
    page.goto(f"{live_server.url}/bots/{flaky.pk}/")
    for kind, count in expected.items():
        expect(page.locator(f"[data-fault-kind='{kind}'] strong")).to_have_text(str(count))


def _has_fault(game: Game, round_number: int, play: int) -> bool:
    if play < 1:
        return False
    return game.log.meta[round_number - 1][play - 1]["fault"] is not None


def test_sign_up_log_in_and_register_a_bot_by_clicking(
    live_server, page, screenshot, transactional_db
):
    from bots_sdk.examples.greedy import choose
    from bots_sdk.server import serve_in_thread

    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Sign up").click()
    screenshot(page, "signup", phone=False)
    page.get_by_label("Username").fill("carmen")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="My bots", exact=True)).to_be_visible()

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("carmen")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".errorlist")).to_be_visible()
    screenshot(page, "login", phone=False)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="My bots", exact=True)).to_be_visible()

    with serve_in_thread(choose, name="greedy") as server:
        page.get_by_label("Name").fill("carmens-greedy")
        page.get_by_label("URL").fill(server.url)
        page.get_by_label("Description").fill("Takes the most cards it can.")
        page.get_by_role("button", name="Register bot").click()
        secret = page.get_by_test_id("secret")
        expect(secret).to_have_text(re.compile(r"^whsec_"))
        screenshot(page, "my-bots")
        page.reload()
        expect(page.get_by_test_id("secret")).to_have_count(0)

        page.get_by_role("button", name="Run protocol check").click()
        # The check runs as a task; its section says when it is done (web/check-progress.js).
        expect(page.locator(".messages")).to_contain_text("protocol check of carmens-greedy")
        report = page.get_by_test_id("check-report")
        expect(report).to_be_visible()
        expect(report.locator("tbody tr").first).to_be_visible()
        screenshot(page, "my-bots-check")


def test_bot_profile_shows_its_elo_history(league_world, live_server, page, screenshot):
    world = league_world()
    bot = world.bots[2]
    page.goto(f"{live_server.url}/bots/{bot.pk}/")
    expect(page.get_by_role("heading", name=re.compile("^expert"))).to_be_visible()
    chart = page.locator("svg.chart")
    fits = RatingPoint.objects.filter(bot=bot, pool=world.league.pool).count()
    assert fits >= 1
    assert int(chart.get_attribute("data-points")) == fits  # the rating after each fit
    expect(page.get_by_role("cell", name="p50")).to_be_visible()

    records: dict[str, list[int]] = {}  # opponent: games, wins, draws, losses
    for game in Game.objects.filter(seats__bot=bot, status=Game.Status.FINISHED):
        mine = game.seats.get(bot=bot).team
        other = game.seats.exclude(bot=bot).get()
        record = records.setdefault(other.bot.name, [0, 0, 0, 0])
        record[0] += 1
        record[1 if game.winner == mine else 2 if game.winner is None else 3] += 1
    rows = page.locator("[data-testid=head-to-head] tbody tr")
    expect(rows).to_have_count(len(records))
    for name, record in records.items():
        cells = page.locator(f"[data-testid=head-to-head] tr[data-opponent='{name}'] td")
        expect(cells).to_have_text([name, *(str(n) for n in record)])
    screenshot(page, "bot")


ACCESSIBILITY_PROBLEMS = """() => {
  const problems = [];
  const named = (el) => (el.getAttribute("aria-label") || el.textContent || "").trim() ||
    el.getAttribute("aria-labelledby");
  if (!document.documentElement.lang) problems.push("html has no lang");
  if (document.querySelectorAll("main").length !== 1) problems.push("not exactly one main");
  if (document.querySelectorAll("h1").length !== 1) problems.push("not exactly one h1");
  if (!document.querySelector("nav[aria-label]")) problems.push("no labelled nav");
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden") continue;
    if (!(el.labels && el.labels.length) && !el.getAttribute("aria-label")) {
      problems.push(`unlabelled ${el.tagName} ${el.name || el.id}`);
    }
  }
  for (const el of document.querySelectorAll("button, a[href], [role=img]")) {
    if (!named(el)) problems.push(`unnamed ${el.tagName} ${el.outerHTML.slice(0, 80)}`);
  }
  return problems;
}"""


def test_pages_have_landmarks_labels_and_names(league_world, live_server, page, django_user_model):
    world = league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).first()
    paths = [
        "/",
        "/leagues/",
        f"/leagues/{world.league.pk}/",
        f"/bots/{world.bots[0].pk}/",
        f"/games/{game.pk}/#r1p3",
        "/accounts/login/",
        "/accounts/signup/",
    ]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        assert page.evaluate(ACCESSIBILITY_PROBLEMS) == [], (path, page.content()[:500])
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(world.owner.username)
    page.get_by_label("Password").fill(world.password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/my/bots/$"))
    assert page.evaluate(ACCESSIBILITY_PROBLEMS) == [], "/my/bots/"


def test_league_page_lists_faults_by_kind_with_a_link_to_the_first(league_world, client):
    world = league_world(flaky_every=25)
    flaky = world.bots[0]
    html = client.get(f"/leagues/{world.league.pk}/").content.decode()
    table = html.split('data-testid="faults"', 1)[1].split("</table>", 1)[0]
    for game in Game.objects.filter(league=world.league, faults__gt=0):
        faults = game.log.faults
        first = faults[0]
        assert f'href="/games/{game.pk}/#r{first["round"]}p{first["play"]}"' in table
        kinds = Counter(fault["kind"] for fault in faults)
        for kind, count in kinds.items():
            assert f'<span data-fault-kind="{kind}">{kind} ×{count}</span>' in table
    assert f'href="/bots/{flaky.pk}/"' in table


def test_replay_of_a_forfeited_game_shows_where_it_stopped(
    live_server, page, transactional_db, django_user_model
):
    """A forfeit cuts a round short: that round has no score, and the viewer says so."""
    owner = django_user_model.objects.create_user(username="rules", password=PASSWORD)
    game = EngineGame.new(Ruleset.from_preset("classic", {}), seed=11)
    for _ in range(40):  # into the second round
        game.apply(game.legal_moves()[0])
    game.forfeit(1, reason="faults")
    log = game.log()
    assert log["rounds"][-1]["score"] is None
    stored = stored_game(owner, ruleset=log["ruleset"], seed=log["seed"], log=log)

    last = len(log["rounds"])
    page.goto(f"{live_server.url}/games/{stored.pk}/#r{last}end")
    expect(page.locator("[data-part=event]")).to_contain_text("forfeited")
    expect(page.get_by_text("forfeit: not scored")).to_be_visible()
    _focus_viewer(page)
    page.keyboard.press("Home")
    page.keyboard.press("End")
    expect(page.get_by_text("forfeit: not scored")).to_be_visible()


def test_replay_shows_the_logs_own_breakdown_and_old_logs_without_it(
    live_server, page, transactional_db, django_user_model
):
    """The viewer re-derives no rule: it shows the setenta cards and the bonus split the log
    carries; a log written before they were logged still shows its points."""
    owner = django_user_model.objects.create_user(username="rules", password=PASSWORD)
    log = _scripted_log("bonus", lambda score: score["bonus"]["sevens"] == 1)
    r, round_log = next(
        (r, round_log)
        for r, round_log in enumerate(log["rounds"], start=1)
        if any(score["bonus"]["sevens"] for score in round_log["score"])
    )
    team = next(t for t, score in enumerate(round_log["score"]) if score["bonus"]["sevens"])
    game = stored_game(owner, ruleset=log["ruleset"], seed=log["seed"], log=log)
    page.goto(f"{live_server.url}/games/{game.pk}/#r{r}end")
    cells = page.evaluate(SCORE_CELLS)
    assert cells[f"bonus-sevens/{team}/points"] == "+1"

    classic = _scripted_log("classic", lambda score: len(score["setenta_cards"]) == 4)
    r, round_log = next(
        (r, round_log)
        for r, round_log in enumerate(classic["rounds"], start=1)
        if len(round_log["score"][0]["setenta_cards"]) == 4
    )
    shown_order = list(reversed(round_log["score"][0]["setenta_cards"]))
    round_log["score"][0]["setenta_cards"] = shown_order  # only the log can say this order
    game = stored_game(
        owner, ruleset=classic["ruleset"], seed=classic["seed"], log=classic, names=("c0", "c1")
    )
    page.goto(f"{live_server.url}/games/{game.pk}/#r{r}end")
    expect(page.locator("[data-part=score-title]")).to_have_text(f"Round {r} score")
    assert page.evaluate(SCORE_CELLS)["setenta/0/value"] == " ".join(shown_order)

    for round_log in log["rounds"]:
        for score in round_log["score"] or []:
            for added in ("best_cards", "setenta_cards", "bonus"):
                del score[added]
    old = stored_game(owner, ruleset=log["ruleset"], seed=log["seed"], log=log, names=("o0", "o1"))
    url = f"{live_server.url}/games/{old.pk}/"
    page.goto(url)
    shown = _check_score_breakdown(page, url, log)
    assert not any("bonus-sevens/label" in cells for cells in shown)
