"""The fake bots the tests serve on loopback, by what a test needs of them.

A bot that plays well is the SDK's own: ``bots_sdk.serve_in_thread(greedy.choose)`` (the example
bots, session-wide: ``example_servers`` in tests/leagues/conftest.py). Beside it:

- players.py: legal movers with a twist, served by the SDK: `Slow` (think time, counts its
  moves), `Flaky` (HTTP 500 every n-th move), `Switchable` (broken on demand), `NoticedBot`
  (counts the start and end notices per game);
- http_bots.py: bots made by hand that the SDK would never let you write: `misbehaving(mode)`
  (another protocol, slow, HTTP errors, bad JSON, a metadata redirect, huge or dripped bodies),
  `fake_bot(answer=..., delay_s=...)` (any answer, made by hand), `StrictBot` (refuses every
  unsigned call), and `refused_url()` / `closed_port()` where nothing listens;
- simple.py: `SimpleBot`, an aiohttp bot that records every request, checks signatures and can
  play illegal moves or answer anything;
- hostile.py: `HostileBots`, raw HTTP/1.1 that misbehaves below HTTP (dripped header bytes, lies
  about lengths, gzip bombs, replies nobody asked for), one behaviour per URL path; served by
  `loops.ServerThread`.
"""
