"""The Django app of Escoba Arena: accounts, bots, leagues, ratings, API and pages."""
