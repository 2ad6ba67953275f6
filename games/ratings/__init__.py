"""How results become a ranking: what a set counts for and the Bradley-Terry fit.

The arena's published ratings (``tournaments.services.rating_fits``) and the SDK's local league
(``python -m bots_sdk league``) both use these modules, so a local league prints what the
server would:

- ``games.ratings.sets``: a finished game's standings, a set's pair scores (by game points on
  fresh deals, by games won on duplicate deals), no-shows;
- ``games.ratings.fit``: the Bradley-Terry fit on the Elo scale with intervals (numpy);
- ``games.ratings.ranking``: a fit's published figures, who is provisional, the order.

Pure: no Django, no I/O.
"""
