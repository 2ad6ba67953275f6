"""The migrations describe the models as they are: a model change without its migration would
reach production as a table that does not match the code."""

import pytest
from django.core.management import call_command

from tournaments import packed


@pytest.mark.django_db
def test_every_model_change_has_its_migration():
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    except SystemExit as exit:  # --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check found a change with no migration (exit {exit.code})")


def test_an_empty_diagnostics_default_is_an_empty_list():
    assert packed.unpack(packed.empty_list()) == []
