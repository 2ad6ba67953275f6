// An Escoba Arena bot in Node.js, with nothing but Node's standard library.
//
// It speaks escoba/1 (docs/bot-protocol.md): GET / answers who the bot is, POST /move answers
// one of the request's legal_moves, POST /start and POST /end are courtesy notices. With a
// secret (ESCOBA_BOT_SECRET=whsec_...) it is strict: every request, GET / included, must carry
// a valid Standard Webhooks signature made with that secret, a timestamp within five minutes
// and a webhook-id not seen before; anything else gets 401.
//
// Run:   ESCOBA_BOT_SECRET=whsec_... PORT=8001 node starters/node/bot.js
// Edit `chooseMove` to make it play better.

"use strict";

const crypto = require("node:crypto");
const http = require("node:http");

const PROTOCOL = "escoba/1";
const MAX_BODY_BYTES = 1024 * 1024;
const TOLERANCE_S = 5 * 60;
const INFO = { protocol: PROTOCOL, name: "node-starter", author: "Escoba Arena starters", version: "1" };

// --- signatures (https://www.standardwebhooks.com/) --------------------------------------------

/** The HMAC key of a `whsec_...` secret: the base64 after the prefix. */
function secretKey(secret) {
  if (typeof secret !== "string" || !secret.startsWith("whsec_")) {
    throw new Error("the secret must look like whsec_ followed by base64");
  }
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  if (key.length < 24) {
    throw new Error("the secret's key must be at least 24 bytes");
  }
  return key;
}

/** `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`: what a signer sends. */
function sign(key, id, timestamp, body) {
  const mac = crypto.createHmac("sha256", key);
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

/** Remembers accepted webhook-ids for the tolerance window: a second use is a replay. */
class ReplayGuard {
  constructor(windowMs = (TOLERANCE_S + 30) * 1000) {
    this.windowMs = windowMs;
    this.seen = new Map(); // id -> time accepted; insertion order is arrival order
  }

  firstUse(id, now = Date.now()) {
    for (const [oldId, at] of this.seen) {
      if (at > now - this.windowMs) break;
      this.seen.delete(oldId);
    }
    if (this.seen.has(id)) return false;
    this.seen.set(id, now);
    return true;
  }
}

/**
 * Why the request cannot be proven to be the arena's, or null when it can.
 * `headers` are Node's (lower-case names); `body` is the raw Buffer.
 */
function signatureProblem(key, headers, body, guard, nowS = Math.floor(Date.now() / 1000)) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) return "unsigned: webhook headers missing";
  const stamp = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(nowS - stamp) > TOLERANCE_S) {
    return "stale or malformed webhook-timestamp";
  }
  const expected = Buffer.from(sign(key, id, timestamp, body));
  const matches = signatures.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!matches) return "bad signature";
  if (!guard.firstUse(id)) return "replayed webhook-id";
  return null;
}

// --- playing -----------------------------------------------------------------------------------

/** A card's capture value: "7o" is 7, "10b" is 10. */
function cardValue(card) {
  return parseInt(card, 10);
}

/**
 * The move to play: one of `request.legal_moves`, unchanged. Sweep the table when possible,
 * else take the most cards, else trail the lowest card.
 */
function chooseMove(request) {
  const moves = request.legal_moves;
  const captures = moves.filter((move) => move.capture.length > 0);
  const sweeps = captures.filter((move) => move.capture.length === request.table.length);
  if (sweeps.length > 0) return sweeps[0];
  if (captures.length > 0) {
    return captures.reduce((best, move) => (move.capture.length > best.capture.length ? move : best));
  }
  return moves.reduce((low, move) => (cardValue(move.card) < cardValue(low.card) ? move : low));
}

// --- the server --------------------------------------------------------------------------------

function reply(response, status, payload) {
  const body = JSON.stringify(payload);
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
  });
  response.end(body);
}

/** An http.Server for the bot; `secret` (whsec_...) makes it refuse every unsigned call. */
function createBot({ secret = null, choose = chooseMove, info = INFO } = {}) {
  const key = secret ? secretKey(secret) : null;
  const guard = new ReplayGuard();

  const server = http.createServer((request, response) => {
    const chunks = [];
    let size = 0;
    request.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reply(response, 413, { error: "body too large" });
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (response.writableEnded) return;
      const body = Buffer.concat(chunks);
      if (key) {
        const problem = signatureProblem(key, request.headers, body, guard);
        if (problem) return reply(response, 401, { error: problem });
      }
      const path = request.url.split("?")[0].replace(/\/+$/, "");
      if (request.method === "GET" && path === "") return reply(response, 200, info);
      if (request.method !== "POST") return reply(response, 405, { error: "use GET / or POST" });
      let data;
      try {
        data = JSON.parse(body.toString("utf8"));
      } catch {
        return reply(response, 400, { error: "the body is not JSON" });
      }
      if (path === "/start" || path === "/end") return reply(response, 200, {});
      if (path !== "/move") return reply(response, 404, { error: `no route ${path}` });
      if (!data || !Array.isArray(data.legal_moves) || data.legal_moves.length === 0) {
        return reply(response, 400, { error: "legal_moves: expected a non-empty array" });
      }
      const move = choose(data);
      const answer = { card: move.card, capture: move.capture };
      if (typeof move.debug === "string") answer.debug = move.debug; // seen by the owner only
      return reply(response, 200, answer);
    });
  });
  // Moves are small and latency counts: answer at once, keep connections alive.
  server.on("connection", (socket) => socket.setNoDelay(true));
  server.keepAliveTimeout = 120 * 1000;
  return server;
}

module.exports = { INFO, ReplayGuard, chooseMove, createBot, secretKey, sign, signatureProblem };

if (require.main === module) {
  const port = Number(process.env.PORT || 8001);
  const host = process.env.HOST || "127.0.0.1";
  const secret = process.env.ESCOBA_BOT_SECRET || null;
  const server = createBot({ secret });
  server.listen(port, host, () => {
    const { port: bound } = server.address();
    const mode = secret ? "every call must be signed" : "no secret: signatures not checked";
    console.log(`escoba bot listening on http://${host}:${bound}/ (${mode})`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
