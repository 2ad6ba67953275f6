"""Example bots, each a plain `choose(state)` function: serve one with
`python -m bots_sdk serve bots_sdk.examples.greedy:choose`.

- `random`: any legal move, reproducible per game and turn.
- `greedy`: the biggest capture now (sweeps first, then most cards, the 7 of oros, sevens, oros).
- `expert`: counts the unseen cards and weighs what it takes against what it leaves the next
  player (sweeps of a 5-14 table, the 7 of oros).
- `variants`: cheap re-tunings of the above for a demo league (`cautious`, `sweeper`, seeded
  randoms).
- `search`: determinized Monte Carlo search: samples the unseen cards
  (`games.engine.Determinizer`), plays every legal move out to the end of the round on each
  sample, and takes the best average, within a share of the request's `time_bank_ms`.
- `oracle`: a cheater, to prove the arena gives it nothing to cheat with: `search` with a memory
  of every hand it was dealt, dealing the hands it can link (same deal, shared partner) to their
  seats.
"""
