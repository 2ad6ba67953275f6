"""A small, well-behaved test bot (aiohttp) that can also be told to play illegal moves.

It records every request it receives, checks Standard Webhooks signatures when given a secret
(answering 401 otherwise), and chooses its move by `mode`:

- `first`: the first legal move; `slow`: the same after `delay` seconds;
- `not-in-hand`: a card that is not in its hand (the engine says `card_not_in_hand`);
- `off-table`: its first card capturing a card that is neither on the table nor in its hand;

or, when given `reply(body) -> (status, bytes)`, answers a move with whatever that returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from games.engine import ALL_CARDS
from games.wire import info_reply


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class SimpleBot:
    mode: str = "first"
    secret: str | None = None
    delay: float = 0.0
    seen: list[Seen] = field(default_factory=list)
    reply: Callable[[dict[str, Any]], tuple[int, bytes]] | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/", self.info)
        app.router.add_post("/{name}", self.post)
        return app

    async def info(self, request: web.Request) -> web.Response:
        return web.json_response(info_reply("simple", "tests", "1"))

    async def post(self, request: web.Request) -> web.Response:
        raw = await request.read()
        if self.secret is not None:
            try:
                Webhook(self.secret).verify(raw, dict(request.headers))
            except WebhookVerificationError:
                return web.Response(status=401)
        body = orjson.loads(raw)
        self.seen.append(Seen(request.match_info["name"], dict(request.headers), body))
        if request.match_info["name"] != "move":
            return web.json_response({})
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.reply is not None:
            status, payload = self.reply(body)
            return web.Response(status=status, body=payload, content_type="application/json")
        return web.json_response(self.choose(body))

    def choose(self, body: dict[str, Any]) -> dict[str, Any]:
        hand, table = body["you"]["hand"], body["table"]
        if self.mode == "not-in-hand":
            return {"card": not_in_hand(body), "capture": []}
        if self.mode == "off-table":
            stray = next(str(c) for c in ALL_CARDS if str(c) not in hand + table)
            return {"card": hand[0], "capture": [stray]}
        return body["legal_moves"][0]

    def moves_seen(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.path == "move"]


def not_in_hand(body: dict[str, Any]) -> str:
    """A card the move request's seat does not hold (nor sees on the table)."""
    seen = set(body["you"]["hand"]) | set(body["table"])
    return next(str(card) for card in ALL_CARDS if str(card) not in seen)
