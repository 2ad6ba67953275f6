"""Re-tunings of the example bots for a demo league: same code, different weights or seeds.

Serve one with `python -m bots_sdk serve bots_sdk.examples.variants:cautious`.
"""

from __future__ import annotations

from .expert import Weights, make_expert
from .random import make_random

# What `GET /` says of these bots (see `Bot.author`).
__author__ = "Escoba Arena examples"

# Counts what it leaves the next player twice over: fewer captures, almost no sweeps conceded.
cautious = make_expert(Weights(risk=2.0), name="cautious")
# Lives for the escoba: sweeps at almost any price and worries less about what it leaves.
sweeper = make_expert(Weights(escoba=12.0, risk=0.5), name="sweeper")
# Cares only about the card count, as a beginner might.
counter = make_expert(Weights(oros=0.0, seven=0.0, seven_of_oros=0.0), name="counter")
random_7 = make_random(7)
random_42 = make_random(42)
