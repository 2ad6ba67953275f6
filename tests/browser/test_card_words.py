"""The replay viewer names cards in the engine's words (games.engine.cards), which the page
hands it: the cards its script draws read as the server's {% card %} faces do."""

from games.engine import Card
from tournaments.models import Game
from web.templatetags.cards import card_name


def test_the_viewer_names_cards_as_the_engine_does(league_world, live_server, page):
    league_world()
    game = Game.objects.filter(status=Game.Status.FINISHED).order_by("pk").first()
    page.goto(f"{live_server.url}/games/{game.pk}/#r1end")
    page.locator("[data-seat] summary").evaluate_all("els => els.forEach(e => e.click())")
    drawn = page.locator("[data-part=pile] .card").evaluate_all(
        "els => els.map(e => [e.dataset.card, e.getAttribute('aria-label'),"
        " e.querySelector('.name').textContent])"
    )
    assert len(drawn) > 10
    for text, label, short in drawn:
        card = Card.from_str(text)
        assert label.startswith(f"{card_name(card)}, ")
        assert short in ("sota", "caballo", "rey", "oros", "copas", "espadas", "bastos")
    faces = {short for text, _, short in drawn if Card.from_str(text).value >= 8}
    assert faces <= {"sota", "caballo", "rey"} and faces
