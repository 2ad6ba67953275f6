"""The reliability suite reuses the league fixtures (example bots on loopback, ``make_bot``)."""

from tests.leagues.conftest import example_servers, make_bot

__all__ = ["example_servers", "make_bot"]
