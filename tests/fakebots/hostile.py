"""Misbehaving bots, as one raw HTTP/1.1 server that misbehaves according to the URL path.

A bot URL `http://127.0.0.1:PORT/<behaviour>/` makes `POST .../move` (and every other request)
misbehave in that way. Raw sockets rather than a web framework, because a framework would not
let us drip bytes into the header block or lie about lengths.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import zlib

import orjson

GOOD_MOVE = orjson.dumps({"card": "1o", "capture": []})
DRIP_INTERVAL = 0.05
BOMB_SIZE = 64 * 1024 * 1024


@functools.cache
def gzip_bomb() -> bytes:
    """64 MiB of zeros, gzip-compressed to about 64 KiB."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    parts = [compressor.compress(block) for _ in range(BOMB_SIZE // len(block))]
    parts.append(compressor.flush())
    return b"".join(parts)


def head(status: str, headers: dict[str, str] | None = None, length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(status: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    return head(status, {"Content-Type": "application/json", **(headers or {})}, len(body)) + body


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes]:
    request_head = await reader.readuntil(b"\r\n\r\n")
    lines = request_head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    body = await reader.readexactly(length)
    return method, target, body


async def silent(writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(3600)


async def drip_headers(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\n")
    for _ in range(100_000):
        writer.write(b"X")
        await writer.drain()
        await asyncio.sleep(DRIP_INTERVAL)


async def drip_body(writer: asyncio.StreamWriter) -> None:
    writer.write(head("200 OK", {"Content-Type": "application/json"}, len(GOOD_MOVE) + 10_000))
    for _ in range(100_000):
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(DRIP_INTERVAL)


async def huge_declared(writer: asyncio.StreamWriter) -> None:
    writer.write(head("200 OK", {"Content-Type": "application/json"}, 50_000_000))
    await _stream_zeros(writer)


async def huge_chunked(writer: asyncio.StreamWriter) -> None:
    writer.write(head("200 OK", {"Transfer-Encoding": "chunked"}))
    chunk = b" " * 16384
    for _ in range(3000):
        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        await writer.drain()


async def _stream_zeros(writer: asyncio.StreamWriter) -> None:
    chunk = b" " * 16384
    for _ in range(3000):
        writer.write(chunk)
        await writer.drain()


async def bomb(writer: asyncio.StreamWriter) -> None:
    body = gzip_bomb()
    writer.write(head("200 OK", {"Content-Encoding": "gzip"}, len(body)))
    writer.write(body)
    await writer.drain()


async def redirect(writer: asyncio.StreamWriter) -> None:
    writer.write(head("302 Found", {"Location": "http://169.254.169.254/latest/meta-data/"}, 0))


async def bad_json(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", b'{"card": "7o", '))


async def wrong_schema(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", b'{"cards": ["7o"]}'))


async def not_a_card(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", b'{"card": "8x", "capture": []}'))


async def server_error(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("500 Internal Server Error", b'{"error": "boom"}'))


async def hang_up(writer: asyncio.StreamWriter) -> None:
    writer.close()


async def good(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", GOOD_MOVE))


async def gzipped_good(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", gzip.compress(GOOD_MOVE), {"Content-Encoding": "gzip"}))


async def wrong_protocol(writer: asyncio.StreamWriter) -> None:
    body = orjson.dumps({"protocol": "escoba/0", "name": "old", "author": "x", "version": "1"})
    writer.write(reply("200 OK", body))


# Replies outside HTTP or its bounds, and ways of ending a reply (tests/bots/test_connections.py).
MAX_HEADERS = 64
MAX_HEAD_BYTES = 16 * 1024


async def many_headers(writer: asyncio.StreamWriter) -> None:
    headers = {f"X-Filler-{index}": "x" for index in range(MAX_HEADERS + 1)}
    writer.write(reply("200 OK", GOOD_MOVE, headers))


async def huge_head(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", GOOD_MOVE, {"X-Filler": "x" * (MAX_HEAD_BYTES + 1)}))


async def not_http(writer: asyncio.StreamWriter) -> None:
    writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")


async def until_close(writer: asyncio.StreamWriter) -> None:
    writer.write(head("200 OK", {"Connection": "close"}) + GOOD_MOVE)
    writer.close()


async def chunked(writer: asyncio.StreamWriter) -> None:
    half = len(GOOD_MOVE) // 2
    parts = [GOOD_MOVE[:half], GOOD_MOVE[half:]]
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"
    writer.write(head("200 OK", {"Transfer-Encoding": "chunked"}) + body)


async def then_unasked(writer: asyncio.StreamWriter) -> None:
    """The reply, then 50 ms later another that no request asked for."""
    writer.write(reply("200 OK", GOOD_MOVE))
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.write(reply("200 OK", orjson.dumps({"card": "7o", "capture": []})))


async def twice(writer: asyncio.StreamWriter) -> None:
    """The reply and another one no request asked for, in one write."""
    writer.write(reply("200 OK", GOOD_MOVE) + reply("200 OK", orjson.dumps({"card": "7o"})))


async def bad_gzip(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", b"not gzip at all", {"Content-Encoding": "gzip"}))


async def deflated_good(writer: asyncio.StreamWriter) -> None:
    writer.write(reply("200 OK", zlib.compress(GOOD_MOVE), {"Content-Encoding": "deflate"}))


BEHAVIOURS = {
    "silent": silent,
    "drip-headers": drip_headers,
    "drip-body": drip_body,
    "huge-declared": huge_declared,
    "huge-chunked": huge_chunked,
    "bomb": bomb,
    "redirect": redirect,
    "bad-json": bad_json,
    "wrong-schema": wrong_schema,
    "not-a-card": not_a_card,
    "server-error": server_error,
    "hang-up": hang_up,
    "good": good,
    "gzipped-good": gzipped_good,
    "wrong-protocol": wrong_protocol,
    "many-headers": many_headers,
    "huge-head": huge_head,
    "not-http": not_http,
    "until-close": until_close,
    "chunked": chunked,
    "then-unasked": then_unasked,
    "twice": twice,
    "bad-gzip": bad_gzip,
    "deflated-good": deflated_good,
}


class HostileBots:
    """The server's handler; counts connections so tests can see keep-alive at work."""

    def __init__(self) -> None:
        self.connections = 0
        gzip_bomb()  # built now, not while a client's deadline runs

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                _, target, _ = await read_request(reader)
                behaviour = target.strip("/").split("/")[0]
                await BEHAVIOURS[behaviour](writer)
                if writer.is_closing():
                    return
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
