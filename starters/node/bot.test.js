// The Node.js starter's own tests: `node --test starters/node/` (run by `make test`).
// Real HTTP on loopback, requests signed the way the arena signs them.

"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { after, before, describe, test } = require("node:test");

const { INFO, ReplayGuard, chooseMove, createBot, secretKey, sign } = require("./bot.js");

const GOLDEN = path.join(__dirname, "..", "..", "tests", "bots", "golden");
const SECRET = `whsec_${crypto.randomBytes(24).toString("base64")}`;
const KEY = secretKey(SECRET);

function golden(name) {
  return JSON.parse(fs.readFileSync(path.join(GOLDEN, name), "utf8"));
}

let counter = 0;
function signedHeaders(body, { key = KEY, id = null, timestamp = null } = {}) {
  const msgId = id || `msg_test_${process.pid}_${++counter}`;
  const stamp = String(timestamp ?? Math.floor(Date.now() / 1000));
  return {
    "webhook-id": msgId,
    "webhook-timestamp": stamp,
    "webhook-signature": sign(key, msgId, stamp, body),
  };
}

function call(port, method, route, { body = null, headers = {} } = {}) {
  const data = body === null ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: route,
        headers: { "Content-Type": "application/json", "Content-Length": data.length, ...headers },
      },
      (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode, json: JSON.parse(Buffer.concat(chunks).toString() || "null") }),
        );
      },
    );
    request.on("error", reject);
    request.end(data);
  });
}

function signedCall(port, method, route, body = null, options = {}) {
  const raw = body === null ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  return call(port, method, route, { body, headers: signedHeaders(raw, options) });
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

describe("chooseMove", () => {
  for (const name of fs.readdirSync(GOLDEN).filter((file) => file.startsWith("move_request"))) {
    test(`answers one of the legal moves of ${name}`, () => {
      const request = golden(name);
      const move = chooseMove(request);
      assert.ok(request.legal_moves.some((legal) => JSON.stringify(legal) === JSON.stringify(move)));
    });
  }

  test("sweeps the table when it can, else takes the most cards, else trails the lowest card", () => {
    const sweep = { card: "5o", capture: ["3c", "7e"] };
    assert.deepEqual(
      chooseMove({ table: ["3c", "7e"], legal_moves: [{ card: "2b", capture: [] }, sweep] }),
      sweep,
    );
    const most = { card: "1o", capture: ["4c", "6e", "4b"] };
    assert.deepEqual(
      chooseMove({
        table: ["4c", "6e", "4b", "10c"],
        legal_moves: [{ card: "5c", capture: ["10c"] }, most],
      }),
      most,
    );
    assert.deepEqual(
      chooseMove({ table: [], legal_moves: [{ card: "10b", capture: [] }, { card: "3o", capture: [] }] }),
      { card: "3o", capture: [] },
    );
  });
});

describe("a strict bot (with a secret)", () => {
  let server;
  let port;
  before(async () => {
    server = createBot({ secret: SECRET });
    port = await listen(server);
  });
  after(() => server.close());

  test("GET / answers escoba/1 when signed, 401 when not", async () => {
    const signed = await signedCall(port, "GET", "/");
    assert.equal(signed.status, 200);
    assert.deepEqual(signed.json, INFO);
    assert.equal(signed.json.protocol, "escoba/1");
    const unsigned = await call(port, "GET", "/");
    assert.equal(unsigned.status, 401);
  });

  test("POST /move answers a legal move to a signed request", async () => {
    const request = golden("move_request_2p_first_move.json");
    const answer = await signedCall(port, "POST", "/move", request);
    assert.equal(answer.status, 200);
    assert.ok(request.legal_moves.some((legal) => legal.card === answer.json.card));
  });

  test("/start and /end are answered", async () => {
    for (const route of ["/start", "/end"]) {
      assert.equal((await signedCall(port, "POST", route, { protocol: "escoba/1" })).status, 200);
    }
  });

  test("refuses a forged signature, another secret, a stale timestamp and a replay", async () => {
    const request = golden("move_request_2p_first_move.json");
    const raw = Buffer.from(JSON.stringify(request));
    const forged = { ...signedHeaders(raw), "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" };
    assert.equal((await call(port, "POST", "/move", { body: request, headers: forged })).status, 401);

    const otherKey = crypto.randomBytes(24);
    assert.equal((await signedCall(port, "POST", "/move", request, { key: otherKey })).status, 401);

    const stale = Math.floor(Date.now() / 1000) - 10 * 60;
    assert.equal((await signedCall(port, "POST", "/move", request, { timestamp: stale })).status, 401);

    const once = signedHeaders(raw);
    assert.equal((await call(port, "POST", "/move", { body: request, headers: once })).status, 200);
    assert.equal((await call(port, "POST", "/move", { body: request, headers: once })).status, 401);
  });

  test("a body that is not JSON is a 400, an unknown route a 404", async () => {
    const raw = Buffer.from("{not json");
    const answer = await new Promise((resolve) => {
      const request = http.request(
        { host: "127.0.0.1", port, method: "POST", path: "/move", headers: signedHeaders(raw) },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      );
      request.end(raw);
    });
    assert.equal(answer, 400);
    assert.equal((await signedCall(port, "POST", "/nowhere", {})).status, 404);
  });
});

describe("a bot without a secret", () => {
  test("answers unsigned calls", async () => {
    const server = createBot();
    const port = await listen(server);
    try {
      assert.equal((await call(port, "GET", "/")).status, 200);
      const request = golden("move_request_4p_teams_mid_round.json");
      const answer = await call(port, "POST", "/move", { body: request });
      assert.equal(answer.status, 200);
      assert.ok(request.legal_moves.some((legal) => legal.card === answer.json.card));
    } finally {
      server.close();
    }
  });
});

test("the replay guard forgets ids after its window", () => {
  const guard = new ReplayGuard(1000);
  assert.equal(guard.firstUse("a", 0), true);
  assert.equal(guard.firstUse("a", 500), false);
  assert.equal(guard.firstUse("a", 2000), true);
});

test("a secret that is not whsec_ base64 is refused at start-up", () => {
  assert.throws(() => secretKey("not-a-secret"), /whsec_/);
  assert.throws(() => secretKey("whsec_c2hvcnQ="), /24 bytes/);
});
