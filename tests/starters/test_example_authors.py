"""The example bots say who wrote them, served directly and as `make run`'s demo bots."""

import pytest

from bots_sdk import Bot, serve_in_thread
from bots_sdk.bot import as_bot
from bots_sdk.examples import expert, greedy, random, variants
from scripts import run

AUTHOR = "Escoba Arena examples"


@pytest.mark.parametrize(
    "choose",
    [greedy.choose, random.choose, expert.choose, variants.cautious, variants.random_7],
)
def test_every_example_has_an_author(choose):
    assert as_bot(choose).info()["author"] == AUTHOR


@pytest.mark.parametrize("name", list(run.DEMO_BOTS))
def test_the_demo_bots_keep_the_example_author(name):
    assert as_bot(getattr(run, f"demo_{name}"), name=name).info()["author"] == AUTHOR


def test_an_author_given_or_a_module_without_one():
    def choose(state):
        return state.legal_moves[0]

    assert Bot(choose, author="ana").info()["author"] == "ana"
    assert Bot(choose).info()["author"] == ""


@pytest.mark.django_db
def test_a_registered_example_shows_its_author(user_client, settings):
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = True
    with serve_in_thread(greedy.choose, name="greedy") as handle:
        created = user_client.post("/api/bots/", {"name": "g", "url": handle.url}, format="json")
    assert created.json()["protocol_author"] == AUTHOR
