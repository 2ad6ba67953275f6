"""HTTPS bots: the caller dials the pinned address but speaks TLS to the URL's host name.

The certificate below is valid for `bot.example.com` only, and the bot listens on 127.0.0.1. A
call to `https://bot.example.com:PORT/` whose name resolves to 127.0.0.1 must succeed (SNI and
certificate check use the name, not the address), and the same server under another name must
fail the certificate check. aiohttp builds its default TLS context when it is imported, so each
case runs in a fresh interpreter that trusts the test certificate through `SSL_CERT_FILE`.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = "bot.example.com"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
         "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}"],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    return folder


def call_over_tls(folder: Path, host: str) -> dict:
    """One move call to `https://host:PORT/`, made in a child interpreter; what both ends saw."""
    env = {**os.environ, "SSL_CERT_FILE": str(folder / "cert.pem"), "PYTHONPATH": str(ROOT)}
    code = f"from tests.bots.test_tls import child; child({str(folder)!r}, {host!r})"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def child(folder: str, host: str) -> None:
    """Serve one TLS bot on 127.0.0.1 and call it by `host`; print what happened as JSON."""
    from aiohttp import web

    from tests.bots.calls import sample_request
    from tests.fakebots.simple import SimpleBot
    from tournaments.bot_calls.caller import BotClient

    server_names: list[str | None] = []

    def remember(sock: ssl.SSLObject, name: str | None, context: ssl.SSLContext) -> None:
        server_names.append(name)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(f"{folder}/cert.pem", f"{folder}/key.pem")
    context.sni_callback = remember
    bot = SimpleBot()

    async def main() -> dict:
        runner = web.AppRunner(bot.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]

        async def dns(name: str, port: int) -> list[str]:
            return ["127.0.0.1"]

        client = BotClient(f"https://{host}:{port}/", None, allow_private=True, resolve=dns)
        try:
            reply = await client.move(sample_request(), 5000)
        finally:
            await client.aclose()
            await runner.cleanup()
        return {
            "fault": None if reply.fault is None else reply.fault.to_dict(),
            "server_names": server_names,
            "hosts": [seen.headers.get("Host") for seen in bot.moves_seen()],
            "port": port,
        }

    sys.stdout.write(json.dumps(asyncio.run(main())))


def test_tls_uses_the_host_name_while_connecting_to_the_pinned_address(certificate):
    seen = call_over_tls(certificate, NAME)
    assert seen["fault"] is None
    assert seen["server_names"] == [NAME]
    assert seen["hosts"] == [f"{NAME}:{seen['port']}"]


def test_a_certificate_for_another_name_is_a_connect_fault(certificate):
    seen = call_over_tls(certificate, "other.example.com")
    assert seen["fault"]["kind"] == "connect"
    assert "certificate" in seen["fault"]["detail"].lower()
    assert seen["hosts"] == []
