"""Everything the service does to call bots over HTTP, in one place.

- `addresses`: which URLs and IP addresses a bot may have (the SSRF policy);
- `caller`: the hardened HTTP client: deadlines, size caps, signing, pinned DNS; it sends
  moves and notices, registration's `GET U`, the protocol check (`games.protocol_check`) and the
  owners' notification webhooks;
- `deadlines`: a call's deadline, judged only by an event loop that is on time, so a stall of
  our own process is never a bot's timeout;
- `faults`: what a bot can do wrong and the fault policy;
- `runner`: one game between bot endpoints, refereed by the engine.

The rules, the wire format and the check's judgement are `games`; this package is only how the
service reaches bots with them.
"""
