// The replay viewer: renders any escoba-log/1 document, one step at a time.
//
// The log only records deals and plays, so the viewer rebuilds each step's table, hands and
// captured piles by bookkeeping (no rules are judged here: the engine already refereed the game).
// Scores are never recomputed, nor the rules behind them: the round-end points and their
// breakdown (each side's best card per suit, the setenta order, what a bonus added) are read from
// the log as the engine computed them. Logs written before the breakdown was logged show the
// points without it.
//
// Every step has a shareable address: #r2p0 is round 2 as dealt, #r2p14 the table after its
// 14th play, #r2end the round's score. Keys, only while focus is in the viewer: arrows step,
// Page Up/Down jump a round, Home/End. The plays list is one Tab stop (a roving tabindex on the
// current step), and focus inside it follows the step.
//
// A game still being played is shown by the same viewer (replay-live.js feeds it): its log has
// `live: true`, its deals hold `null` for each card nobody may see yet (drawn face down), and the
// round in progress has no score step yet. `update(log)` takes the longer log in place: lists are
// patched (patch.js), never rebuilt, and a `quiet` step change never moves focus.

import { patchChildren } from "./patch.js";
import { markScrollableRegions } from "./site.js";

// The engine's names of the suits (in its order, that of a score's best_cards) and of the face
// cards, written into the page by the server ({% card_words %}).
const cardWords = typeof document === "undefined" ? null : document.getElementById("card-words");
const { suits: SUIT_NAMES, faces: FACE_NAMES } =
  cardWords ? JSON.parse(cardWords.textContent) : { suits: {}, faces: {} };
const SUIT_ORDER = Object.keys(SUIT_NAMES);
// The categories a bonus ruleset can double, and what doubles them (rules A and C): the labels
// of the bonus rows; the log's score.bonus says how many points a bonus added.
const BONUSES = { cards: "30+ cards, the others under 10", oros: "all 10 oros", sevens: "all four sevens" };

function parseCard(text) {
  const match = /^(10|[1-9])([oceb])$/.exec(text);
  if (!match) throw new Error(`not a card: ${text}`);
  return { value: Number(match[1]), suit: match[2] };
}

export function cardName(text) {
  const { value, suit } = parseCard(text);
  const face = FACE_NAMES[value];
  return face ? `${face} (${value}) of ${SUIT_NAMES[suit]}` : `${value} of ${SUIT_NAMES[suit]}`;
}

/** A card nobody may see yet (a live game's hands): its back, described by its list. */
function hiddenCard() {
  const el = document.createElement("span");
  el.className = "card back";
  el.setAttribute("aria-hidden", "true");
  return el;
}

/** One card face; the same markup as the {% card %} template tag renders. */
export function cardElement(text, frenchLabels, extraClass = "") {
  if (text === null) return hiddenCard();
  const { value, suit } = parseCard(text);
  const el = document.createElement("span");
  el.className = `card s-${suit} ${extraClass}`.trim();
  el.dataset.card = text;
  el.setAttribute("role", "img");
  const french = frenchLabels[text] || text;
  el.setAttribute("aria-label", `${cardName(text)}, ${french}`);
  el.title = `${cardName(text)} · ${french}`;
  el.innerHTML =
    `<span class="rank spanish-rank" aria-hidden="true">${value}</span>` +
    `<svg class="pip" aria-hidden="true"><use href="#suit-${suit}"></use></svg>` +
    `<span class="french" aria-hidden="true"></span>` +
    `<span class="name" aria-hidden="true">${FACE_NAMES[value] || SUIT_NAMES[suit]}</span>`;
  el.querySelector(".french").textContent = french;
  return el;
}

function removeCards(from, cards) {
  for (const card of cards) {
    const at = from.indexOf(card);
    if (at < 0) throw new Error(`card ${card} is not where the log says`);
    from.splice(at, 1);
  }
}

/** Take `card` from a hand; in a live game's hidden hand, one of its face-down cards. */
function playFromHand(hand, card) {
  const at = hand.indexOf(card);
  const hidden = hand.indexOf(null);
  if (at < 0 && hidden >= 0) hand.splice(hidden, 1);
  else removeCards(hand, [card]);
}

function snapshot(state) {
  return {
    table: [...state.table],
    hands: state.hands.map((hand) => [...hand]),
    piles: state.piles.map((pile) => [...pile]),
    escobas: [...state.escobas],
  };
}

/**
 * The viewer takes an escoba-log/1 document, with the page's per-play `meta` (latency, fault)
 * beside it, or an older `{log, meta, faults}` wrapper.
 */
export function unwrapLog(doc) {
  if (doc.format) return doc;
  return { ...doc.log, meta: doc.meta || [], faults: doc.faults || [] };
}

/** Every step of the game: each round's deal, each play, and each round's end. */
export function buildSteps(log) {
  const seats = log.seats.length;
  const steps = [];
  log.rounds.forEach((round, r) => {
    const state = {
      table: [...round.table],
      hands: Array.from({ length: seats }, () => []),
      piles: Array.from({ length: seats }, () => []),
      escobas: Array(seats).fill(0),
    };
    let dealt = 0;
    const deal = () => {
      round.deals[dealt].forEach((cards, seat) => state.hands[seat].push(...cards));
      dealt += 1;
    };
    deal();
    if (round.lucky_deal) {
      const lucky = round.lucky_deal;
      removeCards(state.table, lucky.cards);
      state.piles[lucky.seat].push(...lucky.cards);
      state.escobas[lucky.seat] += lucky.escobas;
    }
    const scoresBefore = r === 0 ? log.seats.map(() => 0) : log.rounds[r - 1].totals;
    steps.push({ kind: "deal", round: r, play: 0, scoresBefore, ...snapshot(state) });
    round.plays.forEach((play, p) => {
      if (state.hands.every((hand) => hand.length === 0)) deal();
      const tableBefore = [...state.table];
      playFromHand(state.hands[play.seat], play.card);
      if (play.capture.length) {
        removeCards(state.table, play.capture);
        state.piles[play.seat].push(play.card, ...play.capture);
        if (play.escoba) state.escobas[play.seat] += 1;
      } else {
        state.table.push(play.card);
      }
      steps.push({ kind: "play", round: r, play: p + 1, move: play, tableBefore, scoresBefore,
        ...snapshot(state) });
    });
    // A live game's round in progress has no end yet.
    if (log.live && round.totals === null && !log.result) return;
    const leftover = round.leftover;
    if (leftover && leftover.cards.length) {
      removeCards(state.table, leftover.cards);
      state.piles[leftover.seat].push(...leftover.cards);
    }
    steps.push({ kind: "end", round: r, play: round.plays.length + 1, leftover, scoresBefore,
      ...snapshot(state) });
  });
  return steps;
}

export function stepHash(step) {
  const round = step.round + 1;
  return step.kind === "end" ? `r${round}end` : `r${round}p${step.play}`;
}

/**
 * The latency and fault of one play, which the game log API adds beside the log: either as
 * `meta[round][play]` (the match runner's record) or as fields of the play itself.
 */
export function playMeta(log, round, play) {
  const rows = Array.isArray(log.meta) ? log.meta[round] : null;
  const raw = (rows && rows[play]) || log.rounds[round].plays[play] || {};
  const faults = [];
  if (raw.fault) faults.push({ kind: raw.fault, detail: raw.detail || "" });
  for (const fault of raw.faults || []) {
    faults.push(typeof fault === "string" ? { kind: fault, detail: "" } : fault);
  }
  const latency = raw.latency_ms === undefined ? null : raw.latency_ms;
  return latency === null && faults.length === 0 ? null : { latency, faults };
}

function teamOf(log, seat) {
  return log.seats[seat] ? log.seats[seat].team : seat;
}

export class ReplayViewer {
  constructor(root, log, seatNames, frenchLabels) {
    this.root = root;
    this.log = unwrapLog(log);
    this.seatNames = seatNames;
    this.frenchLabels = frenchLabels;
    this.steps = buildSteps(this.log);
    this.index = 0;
    this.timer = null;
    this.rendered = false;
    this.el = (name) => root.querySelector(`[data-part="${name}"]`);
  }

  start() {
    // A live game's page shows these disabled until its first snapshot starts the viewer
    // (game_replay.html): one focused then would be disabled under the user, losing focus.
    this.root.querySelectorAll("[data-go], [data-part=slider]").forEach((control) => {
      control.disabled = false;
    });
    const slider = this.el("slider");
    slider.max = String(this.steps.length - 1);
    slider.addEventListener("input", () => this.go(Number(slider.value)));
    this.root.querySelectorAll("[data-go]").forEach((button) => {
      button.addEventListener("click", () => this.command(button.dataset.go));
    });
    // Only inside the viewer: elsewhere the keys keep their usual jobs (scrolling, links).
    this.root.addEventListener("keydown", (event) => this.onKey(event));
    window.addEventListener("hashchange", () => this.fromHash());
    this.setupDeckToggle();
    this.keepFocusClearOfDock();
    this.renderPlayList();
    this.renderRounds();
    if (!this.fromHash()) this.go(0);
  }

  /**
   * The step dock stays at the bottom of the window and its height changes with what it shows
   * (a debug text, a wrapped narration): whatever takes focus scrolls clear of it, never under it.
   */
  keepFocusClearOfDock() {
    const dock = this.el("dock");
    if (!dock || typeof ResizeObserver === "undefined") return;
    const pad = () => {
      document.documentElement.style.scrollPaddingBottom = `${dock.offsetHeight + 8}px`;
    };
    new ResizeObserver(pad).observe(dock);
    pad();
  }

  command(name) {
    const last = this.steps.length - 1;
    const here = this.steps[this.index];
    const roundStart = (r) => this.steps.findIndex((s) => s.round === r);
    switch (name) {
      case "first": return this.go(0);
      case "last": return this.go(last);
      case "prev": return this.go(this.index - 1);
      case "next": return this.go(this.index + 1);
      case "prev-round": {
        const start = roundStart(here.round);
        return this.go(this.index > start ? start : roundStart(Math.max(0, here.round - 1)));
      }
      case "next-round": {
        const next = roundStart(here.round + 1);
        return this.go(next < 0 ? last : next);
      }
      case "play": return this.toggleAutoplay();
      default: return undefined;
    }
  }

  toggleAutoplay() {
    const button = this.root.querySelector('[data-go="play"]');
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    } else {
      if (this.index === this.steps.length - 1) this.go(0);
      this.timer = setInterval(() => {
        if (this.index >= this.steps.length - 1) this.toggleAutoplay();
        else this.go(this.index + 1);
      }, 900);
    }
    // The label says what the button will do; no aria-pressed beside it ("Pause, pressed").
    button.textContent = this.timer ? "Pause" : "Play";
  }

  onKey(event) {
    const target = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (target && target.matches && target.matches("input, textarea, select")) return;
    const keys = {
      ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last",
      PageUp: "prev-round", PageDown: "next-round",
    };
    const inList = Boolean(target && target.closest && target.closest("[data-part=plays]"));
    if (inList) Object.assign(keys, { ArrowUp: "prev", ArrowDown: "next" });
    const name = keys[event.key];
    if (!name) return;
    event.preventDefault();
    this.command(name);
  }

  fromHash() {
    const hash = window.location.hash.replace(/^#/, "");
    const at = this.steps.findIndex((step) => stepHash(step) === hash);
    if (at < 0) return false;
    if (at !== this.index || !this.rendered) this.go(at);
    return true;
  }

  /**
   * Show the longer `log` of a game being played (or its stored log once over), keeping the
   * step shown unless `follow`, which shows the last one. Never moves focus.
   */
  update(log, { follow = false } = {}) {
    this.log = unwrapLog(log);
    this.steps = buildSteps(this.log);
    this.el("slider").max = String(this.steps.length - 1);
    this.renderPlayList();
    this.renderRounds();
    this.go(follow ? this.steps.length - 1 : this.index, { quiet: true });
  }

  /** Show step `index`; `quiet` (a live update, not the user): focus stays where it is. */
  go(index, { quiet = false } = {}) {
    this.quiet = quiet;
    this.index = Math.max(0, Math.min(this.steps.length - 1, index));
    this.rendered = true;
    const step = this.steps[this.index];
    const hash = `#${stepHash(step)}`;
    if (window.location.hash !== hash) history.replaceState(null, "", hash);
    this.el("slider").value = String(this.index);
    this.el("slider").setAttribute("aria-valuetext", this.describeStep(step));
    this.el("step-label").textContent = this.describeStep(step);
    this.el("share").href = hash;
    this.renderTable(step);
    this.renderSeats(step);
    this.renderEvent(step);
    this.renderScore(step);
    this.renderOwnPlay(step);
    this.markPlayList();
    this.setEnds();
  }

  /** Prev and Next are disabled at the ends; focus on the one that goes moves to the other. */
  setEnds() {
    const prev = this.root.querySelector('[data-go="prev"]');
    const next = this.root.querySelector('[data-go="next"]');
    const atStart = this.index === 0;
    const atEnd = this.index === this.steps.length - 1;
    const focused = document.activeElement;
    prev.disabled = atStart;
    next.disabled = atEnd;
    if (this.quiet) return;
    if ((focused === prev && atStart) || (focused === next && atEnd)) {
      const other = focused === prev ? next : prev;
      (other.disabled ? this.root.querySelector('[data-go="play"]') : other).focus();
    }
  }

  describeStep(step) {
    const round = `Round ${step.round + 1}`;
    if (step.kind === "deal") return `${round}, deal`;
    if (step.kind === "end") return `${round}, score`;
    if (this.log.live && this.log.rounds[step.round].totals === null) return `${round}, play ${step.play}`;
    return `${round}, play ${step.play} of ${this.log.rounds[step.round].plays.length}`;
  }

  cardList(container, cards, classFor = () => "") {
    container.replaceChildren(...cards.map((c) => cardElement(c, this.frenchLabels, classFor(c))));
    container.classList.toggle("empty", cards.length === 0);
    container.dataset.cards = cards.filter((c) => c !== null).join(" ");
    const hidden = cards.filter((c) => c === null).length;
    if (hidden) {
      const note = document.createElement("span");
      note.className = "visually-hidden";
      note.textContent = `${plural(hidden, "card")} face down`;
      container.append(note);
    }
  }

  renderTable(step) {
    const table = this.el("table");
    const move = step.move;
    const trailed = move && !move.capture.length ? move.card : null;
    this.cardList(table, step.table, (card) => (card === trailed ? "played" : ""));
    if (move && move.capture.length) {
      // The captured cards stay on view, faded, so the capture reads at a glance; they are not
      // part of the table any more (nor of data-cards).
      for (const card of move.capture) {
        const ghost = cardElement(card, this.frenchLabels, "gone taken");
        ghost.setAttribute("aria-hidden", "true");
        ghost.removeAttribute("role");
        table.append(ghost);
      }
      table.classList.remove("empty");
    }
    this.el("table-area").classList.toggle("swept", Boolean(move && move.escoba));
    this.el("deck-left").textContent = this.deckRemaining(step);
  }

  deckRemaining(step) {
    const round = this.log.rounds[step.round];
    const seats = this.log.seats.length;
    const perDeal = seats * 3;
    const inHands = step.hands.reduce((sum, hand) => sum + hand.length, 0);
    const played = step.kind === "deal" ? 0 : Math.min(step.play, round.plays.length);
    const dealtCards = played + inHands;
    const deals = Math.ceil(dealtCards / perDeal);
    const remaining = 40 - round.table.length - deals * perDeal;
    return `${Math.max(0, remaining)} cards in the deck`;
  }

  renderSeats(step) {
    const nextSeat = this.nextSeat(step);
    this.log.seats.forEach((seatInfo, seat) => {
      const box = this.root.querySelector(`[data-seat="${seat}"]`);
      if (!box) return;
      box.classList.toggle("to-play", nextSeat === seat);
      const played = step.move && step.move.seat === seat;
      this.cardList(box.querySelector("[data-part=hand]"), step.hands[seat]);
      const pile = step.piles[seat];
      this.cardList(box.querySelector("[data-part=pile]"), pile);
      const oros = pile.filter((card) => card.endsWith("o")).length;
      const sevens = pile.filter((card) => card.startsWith("7")).length;
      box.querySelector("[data-part=stats]").textContent =
        `${pile.length} captured · ${oros} oros · ${plural(sevens, "seven")} · ` +
        plural(step.escobas[seat], "escoba");
      box.querySelector("[data-part=pile-count]").textContent = String(pile.length);
      // A round cut short by a forfeit has no totals: the scores stay as they were.
      const scores = (step.kind === "end" && this.log.rounds[step.round].totals)
        || step.scoresBefore;
      box.querySelector("[data-part=game-score]").textContent =
        plural(scores[teamOf(this.log, seat)], "pt");
      box.classList.toggle("just-played", Boolean(played));
    });
  }

  nextSeat(step) {
    if (step.kind === "end") return null;
    const plays = this.log.rounds[step.round].plays;
    return step.play < plays.length ? plays[step.play].seat : null;
  }

  renderEvent(step) {
    const box = this.el("event");
    box.className = "event";
    box.replaceChildren();
    const line = (text) => {
      const p = document.createElement("p");
      p.style.margin = "0.15rem 0";
      p.textContent = text;
      box.append(p);
      return p;
    };
    const round = this.log.rounds[step.round];
    if (step.kind === "deal") {
      line(`${this.seatNames[round.dealer]} deals. ${step.table.length} cards on the table.`);
      if (round.lucky_deal) {
        const lucky = round.lucky_deal;
        box.classList.add("escoba");
        const p = line(`Lucky deal: ${this.seatNames[lucky.seat]} takes `);
        lucky.cards.forEach((c) => p.append(cardElement(c, this.frenchLabels, "small taken")));
        p.append(` (${lucky.escobas} escoba${lucky.escobas === 1 ? "" : "s"})`);
      }
      return;
    }
    if (step.kind === "end") {
      box.classList.add("capture");
      if (step.leftover && step.leftover.cards.length) {
        const p = line(`${this.seatNames[step.leftover.seat]} made the last capture and takes `);
        step.leftover.cards.forEach((c) => p.append(cardElement(c, this.frenchLabels, "small taken")));
      } else if (!this.log.rounds[step.round].score) {
        const result = this.log.result || {};
        const seat = result.forfeit_seat;
        const who = seat === null || seat === undefined ? "A seat" : this.seatNames[seat];
        line(`${who} forfeited the game here (${result.forfeit_reason || "forfeit"}); ` +
          "the round is not scored.");
      } else {
        line("The round is over.");
      }
      return;
    }
    const move = step.move;
    const who = this.seatNames[move.seat];
    const p = line(`${who} plays `);
    p.append(cardElement(move.card, this.frenchLabels, "small played"));
    if (move.capture.length) {
      box.classList.add(move.escoba ? "escoba" : "capture");
      p.append(" and captures ");
      move.capture.forEach((c) => p.append(cardElement(c, this.frenchLabels, "small taken")));
      if (move.escoba) {
        const strong = document.createElement("strong");
        strong.textContent = " Escoba! The table is swept.";
        p.append(strong);
      }
    } else {
      p.append(" to the table (a trail).");
    }
    const meta = playMeta(this.log, step.round, step.play - 1);
    if (meta) {
      if (meta.latency !== null) {
        const latency = document.createElement("span");
        latency.className = "latency small";
        latency.textContent = ` Answered in ${Number(meta.latency).toFixed(1)} ms.`;
        p.append(latency);
      }
      for (const fault of meta.faults) {
        const detail = fault.detail ? ` (${fault.detail})` : "";
        line(`Fault: ${fault.kind}${detail}; the referee played a fallback move.`).className =
          "fault";
      }
    }
  }

  /**
   * The owner's view of their own bot's play: its debug text and the request body to download
   * (for `python -m bots_sdk replay`). The button stays in place, so focus never moves.
   */
  renderOwnPlay(step) {
    const panel = this.el("own-play");
    if (!panel) return;
    const own = step.kind === "play" ? OWN_PLAYS.get(`${step.round + 1}-${step.play}`) : null;
    const here = `round ${step.round + 1}, play ${step.play}`;
    const debug = this.el("own-play-debug");
    // The step label already says where we are: a line only when there is nothing to show.
    const where = this.el("own-play-where");
    where.textContent = !own ? "Step to a play of your bot to see its debug output."
      : own.debug === null ? `Your bot sent no debug text at ${here}.` : "";
    where.hidden = !where.textContent;
    debug.hidden = !own || own.debug === null;
    debug.textContent = own && own.debug !== null
      ? own.debug + (own.debug_truncated ? "\n[cut to 2048 bytes]" : "") : "";
    const button = this.el("own-play-download");
    button.setAttribute("aria-disabled", String(!(own && own.request)));
    button.onclick = () => {
      if (!own || !own.request) return;
      const blob = new Blob([JSON.stringify(own.request, null, 2)], { type: "application/json" });
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = `game-${this.root.dataset.game}-r${step.round + 1}p${step.play}-request.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    };
  }

  renderScore(step) {
    const section = this.el("score");
    // Not scored: the round a forfeit cut short.
    section.hidden = step.kind !== "end" || !this.log.rounds[step.round].score;
    if (section.hidden) return;
    section.querySelector("[data-part=score-title]").textContent =
      `Round ${step.round + 1} score`;
    section.querySelector("[data-part=score-table]").replaceChildren(this.scoreTable(step));
    markScrollableRegions(section);
  }

  teamName(team) {
    const members = this.log.seats.filter((s) => s.team === team).map((s) => this.seatNames[s.seat]);
    return [...new Set(members)].join(" & ");
  }

  /** The setenta's cards as the log ranks them, best first; "–" for each suit it lacks. */
  setentaCards(score) {
    if (!score.setenta_cards) return "not in this log";
    const cards = score.setenta_cards.map((card) => this.frenchOrSpanish(card));
    return [...cards, ...Array(SUIT_ORDER.length - cards.length).fill("–")].join(" ");
  }

  /** The primera's value, and the suits it lacks (the log's best_cards has null for them). */
  primera(score) {
    const missing = (score.best_cards || [])
      .map((card, i) => (card === null ? SUIT_NAMES[SUIT_ORDER[i]] : null))
      .filter(Boolean);
    return missing.length ? `${score.primera} (no ${missing.join(", ")})` : String(score.primera);
  }

  /**
   * The rows of the breakdown for this ruleset: what each side captured, and the points the
   * log awarded for it. The sevens point sits on the row that decides it (most sevens,
   * setenta or primera), named as the rule documents name it.
   */
  scoreRows(step) {
    const options = (this.log.ruleset || {}).options || {};
    const overHalf = options.count_rule === "over_half";
    const how = options.sevens || "setenta";
    const rows = [
      { key: "cards", label: overHalf ? "Cards (more than 20)" : "Cards", value: (s) => s.cards },
      { key: "oros", label: overHalf ? "Oros (more than 5)" : "Oros", value: (s) => s.oros },
      { key: "seven_of_oros", label: "7 of oros", value: (s) => (s.seven_of_oros ? "yes" : "no") },
      {
        key: "sevens",
        label: { most: "Most sevens", per_suit: "Sevens (a point each)" }[how] || "Sevens",
        value: (s) => s.sevens,
        points: how === "most" || how === "per_suit" ? "sevens" : null,
      },
    ];
    if (how === "setenta") {
      rows.push({ key: "setenta", label: "Setenta (best card of each suit)", points: "sevens",
        value: (s) => this.setentaCards(s) });
    }
    if (how === "primera") {
      rows.push({ key: "primera", label: "Primera (all four suits needed)", points: "sevens",
        value: (s) => this.primera(s) });
    }
    rows.push({ key: "escobas", label: "Escobas", value: (s) => s.escobas });
    for (const row of rows) if (row.points === undefined) row.points = row.key;
    // Points the engine added that this viewer has no row for still show, under their own name.
    const known = new Set([...Object.keys(BONUSES), "seven_of_oros", "escobas"]);
    const extra = new Set();
    this.log.rounds[step.round].score.forEach((s) => Object.keys(s.points || {}).forEach((k) => {
      if (!known.has(k)) extra.add(k);
    }));
    for (const key of extra) rows.push({ key, label: labelFor(key), value: () => "", points: key });
    return rows;
  }

  scoreTable(step) {
    const round = this.log.rounds[step.round];
    const before = step.scoresBefore;
    const teams = round.score.length;
    const table = document.createElement("table");
    table.className = "data score";
    const head = document.createElement("thead");
    const headRow = head.insertRow();
    const th = (row, text, scope) => {
      const cell = document.createElement("th");
      cell.textContent = text;
      if (scope) cell.scope = scope;
      row.append(cell);
      return cell;
    };
    th(headRow, "Category", "col");
    for (let t = 0; t < teams; t += 1) {
      th(headRow, this.teamName(t), "col").colSpan = 2;
    }
    table.append(head);
    const body = table.createTBody();
    const addRow = (key, label, value, points) => {
      const row = body.insertRow();
      row.dataset.category = key;
      th(row, label, "row");
      for (let t = 0; t < teams; t += 1) {
        const valueCell = row.insertCell();
        valueCell.className = "num";
        valueCell.dataset.team = String(t);
        valueCell.dataset.field = "value";
        valueCell.textContent = String(value(round.score[t], t));
        const pointsCell = row.insertCell();
        pointsCell.className = "num pts";
        pointsCell.dataset.team = String(t);
        pointsCell.dataset.field = "points";
        const got = points(round.score[t]);
        pointsCell.textContent = got === null ? "" : `+${got}`;
      }
      return row;
    };
    // A doubled category (a bonus) shows as the category's point plus a bonus row's point, as
    // the log's score.bonus splits it; together they make the log's points.
    const bonusOf = (s, key) => (s.bonus || {})[key] || 0;
    const bonuses = [];
    for (const row of this.scoreRows(step)) {
      const pointsOf = (s) => {
        if (!row.points) return null;
        const got = (s.points || {})[row.points];
        return got === undefined ? null : got - bonusOf(s, row.points);
      };
      addRow(row.key, row.label, row.value, pointsOf);
      if (row.points in BONUSES && round.score.some((s) => bonusOf(s, row.points))) {
        bonuses.push(row.points);
      }
    }
    for (const key of bonuses) {
      addRow(`bonus-${key}`, `Bonus: ${BONUSES[key]}`, (s) => (bonusOf(s, key) ? "yes" : ""),
        (s) => bonusOf(s, key) || null).classList.add("bonus");
    }
    const totalRow = body.insertRow();
    totalRow.className = "total";
    totalRow.dataset.category = "total";
    th(totalRow, "Round points", "row");
    for (let t = 0; t < teams; t += 1) {
      const cell = totalRow.insertCell();
      cell.colSpan = 2;
      cell.className = "num";
      cell.dataset.team = String(t);
      cell.textContent = String(round.score[t].total);
    }
    const gameRow = body.insertRow();
    gameRow.dataset.category = "game";
    th(gameRow, "Game total", "row");
    for (let t = 0; t < teams; t += 1) {
      const cell = gameRow.insertCell();
      cell.colSpan = 2;
      cell.className = "num";
      cell.dataset.team = String(t);
      cell.textContent = `${before[t]} → ${round.totals[t]}`;
    }
    return table;
  }

  renderPlayList() {
    const list = this.el("plays");
    // Built apart, then patched in: items already shown stay the same nodes (focus, reading place).
    const items = document.createElement("ol");
    this.steps.forEach((step, index) => {
      if (step.kind === "deal") {
        const head = document.createElement("li");
        head.className = "round-head";
        head.textContent = `Round ${step.round + 1}`;
        list.append(head);
      }
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = `#${stepHash(step)}`;
      link.dataset.index = String(index);
      link.tabIndex = -1;
      const text = document.createElement("span");
      const tags = document.createElement("span");
      if (step.kind === "deal") text.textContent = "Deal";
      else if (step.kind === "end") {
        text.textContent = "Score";
        // The fault that ended the game made no play: its badge is on the round it cut short,
        // so the badges add up to the seats' fault counts.
        const result = this.log.result || {};
        if (!this.log.rounds[step.round].score && result.forfeit_reason === "faults") {
          tags.append(tag("fault", "Fault"));
        }
      } else {
        const move = step.move;
        const card = (c) => this.frenchOrSpanish(c);
        text.textContent = `${step.play}. ${this.seatNames[move.seat]}: ${card(move.card)}` +
          (move.capture.length ? ` × ${move.capture.map(card).join("+")}` : "");
        if (move.escoba) tags.append(tag("escoba", "Escoba"));
        const meta = playMeta(this.log, step.round, step.play - 1);
        if (meta && meta.faults.length) tags.append(tag("fault", "Fault"));
      }
      link.append(text, tags);
      item.append(link);
      items.append(item);
    });
    patchChildren(list, items);
  }

  frenchOrSpanish(card) {
    return this.root.classList.contains("deck-french") ? this.frenchLabels[card] || card : card;
  }

  markPlayList() {
    const list = this.el("plays");
    const hadFocus = list.contains(document.activeElement);
    list.querySelectorAll("a[aria-current]").forEach((a) => {
      a.removeAttribute("aria-current");
      a.tabIndex = -1;
    });
    const current = list.querySelector(`a[data-index="${this.index}"]`);
    if (current) {
      current.setAttribute("aria-current", "step");
      current.tabIndex = 0;
      if (hadFocus && !this.quiet) current.focus({ preventScroll: true });
      const box = list.getBoundingClientRect();
      const at = current.getBoundingClientRect();
      if (at.top < box.top || at.bottom > box.bottom) {
        list.scrollTop += at.top - box.top - box.height / 2;
      }
    }
  }

  renderRounds() {
    const target = this.el("rounds");
    if (!target) return;
    const body = document.createElement("tbody");
    this.log.rounds.forEach((round, r) => {
      if (this.log.live && round.totals === null && !round.score && !this.log.result) return;
      const row = body.insertRow();
      const link = document.createElement("a");
      link.href = `#r${r + 1}end`;
      link.textContent = String(r + 1);
      link.setAttribute("aria-label", `Round ${r + 1} score`);
      row.insertCell().append(link);
      if (!round.score) {
        const cell = row.insertCell();
        cell.colSpan = new Set(this.log.seats.map((s) => s.team)).size;
        cell.textContent = "forfeit: not scored";
        return;
      }
      round.score.forEach((score, t) => {
        const cell = row.insertCell();
        cell.className = "num";
        cell.textContent = `+${score.total} = ${round.totals[t]}`;
      });
    });
    patchChildren(target, body);
  }

  setupDeckToggle() {
    const saved = window.localStorage.getItem("escoba-deck");
    const apply = (deck) => {
      this.root.classList.toggle("deck-french", deck === "french");
      this.root.querySelectorAll("[data-deck]").forEach((button) => {
        button.setAttribute("aria-pressed", String(button.dataset.deck === deck));
      });
      window.localStorage.setItem("escoba-deck", deck);
      this.renderPlayList();
      this.markPlayList();
      if (this.rendered) this.renderScore(this.steps[this.index]);
    };
    this.root.querySelectorAll("[data-deck]").forEach((button) => {
      button.addEventListener("click", () => apply(button.dataset.deck));
    });
    apply(saved === "french" ? "french" : "spanish");
  }
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function tag(kind, text) {
  const span = document.createElement("span");
  span.className = `tag ${kind}`;
  span.textContent = text;
  return span;
}

function labelFor(key) {
  const text = key.replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function readJson(id) {
  return JSON.parse(document.getElementById(id).textContent);
}

// The viewer's own bots' plays ("round-play" → debug, request), on the page for their owner only.
const OWN_PLAYS = new Map();
const ownPlaysScript = typeof document === "undefined" ? null
  : document.getElementById("replay-own-plays");
if (ownPlaysScript) {
  for (const own of JSON.parse(ownPlaysScript.textContent)) {
    OWN_PLAYS.set(`${own.round}-${own.play}`, own);
  }
}

const root = typeof document === "undefined" ? null : document.querySelector("[data-replay]");
// A stored game's page carries its log; a live game's page starts its viewer in replay-live.js.
if (root && document.getElementById("replay-log")) {
  const viewer = new ReplayViewer(
    root, readJson("replay-log"), readJson("replay-seats"), readJson("french-labels"));
  viewer.start();
  window.escobaReplay = viewer;
}
