// A game watched while it is played: the replay viewer (replay.js), fed by the game's event
// stream (web/game_streams.py, /live/games/<id>/).
//
// The stream sends the game so far (`snapshot`), then each `play` as it happens; the browser's
// EventSource reconnects by itself and names the last event it had (Last-Event-ID), so a lost
// connection misses nothing. At the `end` the stored log is fetched and shown whole: the hands,
// face down until then, are turned up, and the final score is the stored log's.
//
// "Follow live" (on at first) shows each new play as it comes; stepping through the game by hand
// pauses it, and the button takes it up again. Live updates never move focus. A screen reader
// hears the plays in a polite live region, at most one summary every ANNOUNCE_EVERY_MS (the end
// of the game at once); while paused, the viewer's own step text speaks instead.

import { ReplayViewer, cardName } from "./replay.js";

// How often a finished game's log is asked for again while its set is still in play.
const SEALED_RETRY_MS = 2000;

const ANNOUNCE_EVERY_MS = 5000;
// Plays are added to the log as they come, and the viewer redrawn at most this often: a burst of
// plays (a reconnect, a slow device) costs one redraw, not one each.
const DRAW_EVERY_MS = 200;

function readJson(id) {
  return JSON.parse(document.getElementById(id).textContent);
}

/** The escoba-log/1 document so far, grown by one `play` event's change. */
export function applyChange(log, change) {
  const round = log.rounds[change.round];
  if (change.play) {
    round.plays.push(change.play);
    (log.meta[change.round] = log.meta[change.round] || []).push(change.meta || {});
  }
  if (change.deal) round.deals.push(change.deal);
  if (change.round_end) Object.assign(round, change.round_end);
  if (change.next_round) {
    log.rounds.push(change.next_round);
    log.meta.push([]);
  }
  if (change.result) log.result = change.result;
  return log;
}

class Announcer {
  constructor(region) {
    this.region = region;
    this.last = 0;
    this.pending = null;
    this.timer = null;
  }

  say(text, { now = false } = {}) {
    this.pending = text;
    const wait = this.last + ANNOUNCE_EVERY_MS - Date.now();
    if (now || wait <= 0) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), wait);
  }

  flush() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.pending === null || !this.region) return;
    this.region.textContent = this.pending;
    this.pending = null;
    this.last = Date.now();
  }
}

class LiveGame {
  constructor(bar, root) {
    this.bar = bar;
    this.root = root;
    this.seatNames = readJson("replay-seats");
    this.frenchLabels = readJson("french-labels");
    this.status = bar.querySelector("[data-part=live-status]");
    this.followButton = bar.querySelector("[data-part=follow]");
    this.announcer = new Announcer(document.getElementById("live-announce"));
    this.viewer = null;
    this.log = null;
    this.follow = true;
    this.over = false;
    this.drawTimer = null;
    // What tests read: the last play's number, how many play events and snapshots came, the
    // number of the last snapshot's last play.
    // firstAt and endAt: when the first play and the end arrived (performance.now(), ms).
    window.escobaLiveGame = { plays: 0, events: 0, snapshots: 0, state: "waiting" };
  }

  start() {
    this.setFollow(true);
    this.followButton.addEventListener("click", () => this.setFollow(!this.follow));
    // Stepping by hand (buttons, slider, keys, the plays list) pauses following.
    const pause = (event) => {
      if (event.target.closest("[data-go], [data-part=slider], [data-part=plays]")) {
        this.setFollow(false);
      }
    };
    this.root.addEventListener("click", pause, true);
    this.root.addEventListener("input", pause, true);
    this.root.addEventListener("keydown", (event) => {
      if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp",
        "PageDown"].includes(event.key)) this.setFollow(false);
    }, true);
    this.source = new EventSource(this.bar.dataset.liveGame);
    this.source.addEventListener("snapshot", (event) => this.onSnapshot(JSON.parse(event.data)));
    this.source.addEventListener("play", (event) => this.onPlay(JSON.parse(event.data)));
    this.source.addEventListener("reset", (event) => this.onReset(JSON.parse(event.data)));
    this.source.addEventListener("stalled", (event) => this.say(JSON.parse(event.data).message));
    this.source.addEventListener("end", (event) => this.onEnd(JSON.parse(event.data)));
    this.source.addEventListener("error", () => {
      if (this.over) return;
      if (this.source.readyState === EventSource.CLOSED) {
        this.say("The live view is not available right now; reload the page to see the game.");
      } else {
        this.say("Connection lost; reconnecting…");
      }
    });
  }

  setFollow(on) {
    this.follow = on;
    // A toggle: its name stays, aria-pressed says whether it is on.
    this.followButton.setAttribute("aria-pressed", String(on));
    // While following, the throttled region speaks; while stepping, the step text does.
    const event = this.root.querySelector("[data-part=event]");
    if (event) event.setAttribute("aria-live", on && !this.over ? "off" : "polite");
    if (on && this.viewer) this.viewer.go(this.viewer.steps.length - 1, { quiet: true });
  }

  say(text) {
    this.status.textContent = text;
  }

  show(log) {
    this.log = log;
    if (!this.viewer) {
      this.viewer = new ReplayViewer(this.root, log, this.seatNames, this.frenchLabels);
      this.viewer.start();
      this.viewer.go(this.viewer.steps.length - 1, { quiet: true });
      this.setFollow(this.follow);
    } else {
      this.viewer.update(log, { follow: this.follow });
    }
  }

  onSnapshot(data) {
    window.escobaLiveGame.snapshots += 1;
    window.escobaLiveGame.snapshotAt = data.n;
    window.escobaLiveGame.state = "live";
    this.show(data.log);
    this.describe();
  }

  /** Redraw soon, once for every play that came in the meantime. */
  drawSoon() {
    if (this.drawTimer) return;
    this.drawTimer = setTimeout(() => {
      this.drawTimer = null;
      if (this.over) return;
      this.show(this.log);
      this.describe();
    }, DRAW_EVERY_MS);
  }

  onPlay(change) {
    if (!this.log) return;
    applyChange(this.log, change);
    this.drawSoon();
    window.escobaLiveGame.plays = change.n;
    window.escobaLiveGame.events += 1;
    if (!window.escobaLiveGame.firstAt) window.escobaLiveGame.firstAt = performance.now();
    if (this.follow) this.announcer.say(this.playText(change));
  }

  onReset(data) {
    this.say(data.message);
    this.announcer.say(data.message, { now: true });
  }

  async onEnd(data) {
    this.over = true;
    clearTimeout(this.drawTimer);
    this.source.close();
    window.escobaLiveGame.endAt = performance.now();
    window.escobaLiveGame.state = data.status;
    if (data.status !== "finished" || !data.log_url) {
      const text = "This game was stopped before it finished: no result, no rating.";
      this.say(text);
      this.announcer.say(text, { now: true });
      return;
    }
    // The log is published when the game's duplicate set ends (409 until then: the set's other
    // games are dealt the same cards); the game is over, so say so and ask again until it is.
    let response = await fetch(data.log_url, { headers: { Accept: "application/json" } });
    if (response.status === 409) {
      // Shown, not announced: the final score is announced once it is known.
      this.say("The game is over. Its replay opens when the other games of its set end.");
    }
    while (response.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, SEALED_RETRY_MS));
      response = await fetch(data.log_url, { headers: { Accept: "application/json" } });
    }
    const stored = await response.json();
    this.show(stored);
    const totals = (this.viewer.log.result || {}).totals || [];
    const text = `The game is over. Final score ${totals.join(" – ")}.`;
    this.status.dataset.totals = totals.join(",");
    this.say(text);
    this.announcer.say(text, { now: true });
    this.setFollow(this.follow);
    window.escobaLiveGame.state = "over";
  }

  describe() {
    const rounds = this.log.rounds;
    const round = rounds[rounds.length - 1];
    const before = rounds.length > 1 ? rounds[rounds.length - 2].totals : null;
    const score = before ? ` Score ${before.join(" – ")}.` : "";
    this.say(`Live: round ${rounds.length}, ${round.plays.length} plays so far.${score}`);
  }

  playText(change) {
    const play = change.play;
    let text = "";
    if (play) {
      text = `${this.seatNames[play.seat]} plays ${cardName(play.card)}`;
      if (play.capture.length) text += ` and captures ${play.capture.map(cardName).join(", ")}`;
      text += play.escoba ? ". Escoba!" : ".";
    }
    if (change.round_end && change.round_end.totals) {
      text += ` Round ${change.round + 1} is over: ${change.round_end.totals.join(" – ")}.`;
    }
    if (change.forfeit !== undefined) text += ` ${this.seatNames[change.forfeit]} forfeits.`;
    return text.trim();
  }
}

if (typeof document !== "undefined") {
  const bar = document.querySelector("[data-live-game]");
  const root = document.querySelector("[data-replay]");
  if (bar && root) new LiveGame(bar, root).start();
}
