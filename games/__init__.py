"""Escoba Arena's game side: the rules engine, the bot wire format and the bot caller.

The engine lives in ``games.engine`` and depends on nothing but the standard library, so the
bots SDK can ship the very same referee through a symlink.
"""
