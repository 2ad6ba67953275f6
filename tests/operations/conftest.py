"""The example bots on loopback and the accounts of tests/leagues, shared here."""

from tests.leagues.conftest import (  # noqa: F401  (fixtures)
    example_servers,
    make_bot,
    make_rated_bot,
    staff,
)
