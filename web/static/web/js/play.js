// The person's game page (web/play_views.py). The part that changes is server-rendered and
// followed through the `play` live topic (patch.js, followLive); this script only lets the
// person choose among the request's own legal_moves (never re-deriving a rule) and posts the
// answer to /api/play/<id>/move/. Live updates never move focus; the bots' plays are announced
// politely, the person's turn assertively.
import { followLive, patchHtml } from "./patch.js";

const root = document.getElementById("play");
const polite = document.getElementById("play-polite");
const assertive = document.getElementById("play-assertive");
let chosen = null; // {card, capture} or null

const part = () => root.firstElementChild;
const legalMoves = () => JSON.parse(root.querySelector("[data-legal]")?.dataset.legal || "[]");
const handButtons = () => [...root.querySelectorAll("[data-testid=hand] button")];
const playButton = () => root.querySelector("[data-testid=play-move]");
const capturesBox = () => root.querySelector("[data-testid=captures]");

function say(region, text) {
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

function choose(card) {
  const moves = legalMoves().filter((move) => move.card === card);
  if (!moves.length) return;
  handButtons().forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.card === card)));
  const box = capturesBox();
  box.replaceChildren();
  chosen = moves.length === 1 ? moves[0] : null;
  if (moves.length > 1) {
    moves.forEach((move, index) => {
      const option = document.createElement("button");
      option.type = "button";
      option.className = "button";
      option.dataset.index = String(index);
      option.setAttribute("aria-pressed", "false");
      option.textContent = move.capture.length ? `Capture ${move.capture.join(" + ")}` : "Trail (capture nothing)";
      option.addEventListener("click", () => {
        chosen = move;
        box.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b === option)));
        playButton().disabled = false;
      });
      box.append(option);
    });
    box.hidden = false;
  } else {
    box.hidden = true;
  }
  const what = chosen ? (chosen.capture.length ? `capturing ${chosen.capture.join(" + ")}` : "trailing it") : "choose a capture";
  say(polite, `${card} chosen, ${what}.`);
  playButton().disabled = !chosen;
}

function reset() {
  chosen = null;
  handButtons().forEach((b) => b.setAttribute("aria-pressed", "false"));
  const box = capturesBox();
  if (box) { box.replaceChildren(); box.hidden = true; }
  if (playButton()) playButton().disabled = true;
}

function csrf() {
  return document.querySelector("input[name=csrfmiddlewaretoken]")?.value || "";
}

async function refresh() {
  const response = await fetch(root.dataset.liveUrl, { headers: { Accept: "text/html" } });
  if (response.ok) apply(root, await response.text());
}

let sending = false;

async function send() {
  const move = chosen;
  if (!move || sending) return;
  sending = true;
  try {
    const response = await fetch(root.dataset.moveUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      credentials: "same-origin",
      body: JSON.stringify({ card: move.card, capture: move.capture }),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      say(assertive, body.detail || "That move was not accepted.");
      return;
    }
    say(polite, `You played ${move.card}.`);
  } finally {
    sending = false;
  }
  await refresh();
}

function apply(element, html) {
  const before = part()?.dataset || {};
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const next = template.content.firstElementChild?.dataset || {};
  // Nothing was played since: keep the page (and the person's choice) as it is.
  if (next.moves === before.moves && next.status === before.status) return;
  const wasStatus = before.status;
  const wasMoves = Number(before.moves || 0);
  const focusedCard = element.contains(document.activeElement) ? document.activeElement.dataset?.card : null;
  patchHtml(element, html);
  const now = part().dataset;
  if (Number(now.moves) > wasMoves) {
    const plays = [...element.querySelectorAll("[data-testid=plays] li")].map((li) => li.textContent);
    if (plays.length) say(polite, plays[plays.length - 1]);
  }
  if (now.status === "your_turn" && wasStatus !== "your_turn") say(assertive, "Your turn.");
  if (now.status === "finished" && wasStatus !== "finished") say(assertive, "The game is over.");
  if (focusedCard && !element.contains(document.activeElement)) {
    // Never move focus to somewhere new: only give it back to the same card when it was redrawn.
    element.querySelector(`[data-testid=hand] button[data-card="${focusedCard}"]`)?.focus();
  }
  reset();
}

root.addEventListener("click", (event) => {
  const card = event.target.closest("[data-testid=hand] button");
  if (card && !card.disabled) choose(card.dataset.card);
  if (event.target.closest("[data-testid=play-move]")) send();
});

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.target.matches?.("input, textarea, select")) return;
  const buttons = handButtons().filter((b) => !b.disabled);
  const index = buttons.indexOf(document.activeElement);
  if ((event.key === "ArrowRight" || event.key === "ArrowLeft") && index >= 0) {
    const step = event.key === "ArrowRight" ? 1 : -1;
    buttons[(index + step + buttons.length) % buttons.length].focus();
    event.preventDefault();
  } else if (/^[1-9]$/.test(event.key) && buttons[Number(event.key) - 1]) {
    buttons[Number(event.key) - 1].focus();
    choose(buttons[Number(event.key) - 1].dataset.card);
  } else if (event.key === "p" || event.key === "P") {
    if (chosen) send();
  } else if (event.key === "Escape") {
    reset();
  }
});

// The move clock counts down on the page (quietly: only the turn itself is announced), from
// the clock_ms the server rendered for this position.
let clockFrom = { moves: null, at: 0 };
setInterval(() => {
  const clock = root.querySelector("[data-testid=clock]");
  const dataset = part()?.dataset;
  if (!clock || !dataset || !dataset.clockMs) return;
  if (clockFrom.moves !== dataset.moves) clockFrom = { moves: dataset.moves, at: Date.now() };
  const left = Number(dataset.clockMs) - (Date.now() - clockFrom.at);
  clock.textContent = String(Math.max(0, Math.round(left / 1000)));
}, 1000);

followLive(root, { apply, isOver: () => part()?.dataset.status === "finished" });
