"""The arena's own account names, and names that only look like them, are refused at sign-up;
an account that holds one from before never gets what the arena makes."""

import pytest
from django.contrib.auth import get_user_model
from django.utils.html import escape
from rest_framework.test import APIClient

from tests.conftest import USER_PASSWORD
from tournaments import messages
from tournaments.models import Bot, League
from tournaments.services.ladder import LADDER_USERNAME, ladder_league
from tournaments.usernames import SYSTEM_USERNAMES, username_reserved, username_skeleton

pytestmark = pytest.mark.django_db

LOOK_ALIKES = [
    "Ladder",
    "LADDER",
    "l\u0430dder",  # Cyrillic a
    "1adder",
    "\u217cadder",  # small roman numeral fifty
    "\uff4c\uff41\uff44\uff44\uff45\uff52",  # full-width
    "lad-der",
    "0perator",
    "\u039f\u03a1\u0395R\u0391\u03a4\u039fR",  # Greek capitals
    "exampIes",
    "exarnples",
    "adm\u00edn",
    "s\u0443stem",
]


@pytest.mark.parametrize("name", [*SYSTEM_USERNAMES, *LOOK_ALIKES])
def test_reserved_names_and_their_look_alikes_are_refused_by_the_api(name):
    response = APIClient().post(
        "/api/auth/register/", {"username": name, "password": USER_PASSWORD}
    )

    assert response.status_code == 400, name
    assert response.json()["errors"] == {"username": [messages.USERNAME_RESERVED]}
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("name", ["ladder", "l\u0430dder", "Operator"])
def test_reserved_names_are_refused_by_the_sign_up_page(client, name):
    response = client.post(
        "/accounts/signup/",
        {"username": name, "password": USER_PASSWORD, "password_again": USER_PASSWORD},
    )

    assert response.status_code == 200
    assert escape(messages.USERNAME_RESERVED) in response.content.decode()
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("name", ["ladders", "ana", "jose", "operators", "rosa", "milo"])
def test_ordinary_names_are_free(name):
    assert not username_reserved(name), username_skeleton(name)


def test_a_stranger_holding_the_ladder_s_name_gets_nothing_of_the_ladder():
    """An account named "ladder" made before names were reserved: the ladder still starts, under
    an account of the arena's that cannot log in; the stranger keeps their own account and bots
    under another name."""
    stranger = get_user_model().objects.create_user(LADDER_USERNAME, password=USER_PASSWORD)
    Bot.objects.create(owner=stranger, name="theirs", url="http://127.0.0.1:9/", secret="whsec_x")

    league = ladder_league("classic/2p")

    assert league.kind == League.Kind.LADDER and league.rated
    owner = league.creator
    assert owner.pk != stranger.pk
    assert owner.username == LADDER_USERNAME
    assert not owner.is_active and not owner.has_usable_password()
    stranger.refresh_from_db()
    assert stranger.username == f"{LADDER_USERNAME}-renamed-{stranger.pk}"
    assert stranger.check_password(USER_PASSWORD)
    assert Bot.objects.get(name="theirs").owner == stranger
    assert ladder_league("classic/2p") == league
