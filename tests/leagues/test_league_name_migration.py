"""Migration league_name_unique: names that were taken twice get a number, then the constraint."""

import pytest
from django.db import IntegrityError, transaction

from tests.leagues.conftest import migrate

BEFORE = [("tournaments", "0007_read_indexes")]
AFTER = [("tournaments", "0008_league_name_unique")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_schema_after")
def test_duplicate_names_are_numbered_and_then_refused():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="namer")
    League = old.get_model("tournaments", "League")
    common = {
        "creator_id": user.pk,
        "ruleset": {"name": "classic"},
        "pool": "classic/2p",
        "players": 2,
    }
    names = ["Demo league", "Demo league", "demo LEAGUE", "Demo league (2)", "Other"]
    ids = [League.objects.create(name=name, seed=1, **common).pk for name in names]

    new = migrate(AFTER)
    League = new.get_model("tournaments", "League")

    assert [League.objects.get(pk=pk).name for pk in ids] == [
        "Demo league", "Demo league (2)", "demo LEAGUE (3)", "Demo league (2) (2)", "Other",
    ]  # fmt: skip
    with pytest.raises(IntegrityError), transaction.atomic():
        League.objects.create(name="OTHER", seed=1, **common)
