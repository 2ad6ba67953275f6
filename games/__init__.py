"""Escoba, as one installable package: the rules engine, the `escoba/1` wire format, the protocol
check and the request signer.

- ``games.engine``: cards, moves, rulesets, the game state and the ``escoba-log/1`` log;
- ``games.wire``: the bodies sent to bots and the replies accepted from them;
- ``games.protocol_check``: the protocol check's positions and judgement, for any transport;
- ``games.signing``: Standard Webhooks signatures, made and verified;
- ``games.scheduling``: who meets whom in a league, and the seatings of a duplicate set;
- ``games.ratings``: what a game and a duplicate set count for, and the Bradley-Terry rating fit.

Pure: the standard library, ``fastjsonschema`` and (for the rating fit only) ``numpy``; no Django
and no HTTP client. The arena and the bots SDK both import it (``pip install ./games``); nothing
here imports either of them.
"""
