// The WebSocket session: hello with `since`, acks by id, reconnect with backoff and jitter.
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 15000;
const POLICY_VIOLATION = 1008; // the gateway's answer to a bad token
const REMOVED = 4003; // this seat left the table or was removed from it: its token is void
const MOVED = 4004; // this seat's player now sits at another seat: the next welcome names it
// A phone that changes networks can keep a dead socket open for minutes: probe it.
const PING_EVERY_MS = 25000;
const PING_TIMEOUT_MS = 10000;

export class Connection {
  constructor({ room, token, since, onWelcome, onEvent, onError, onStatus, onRejected, onRemoved }) {
    Object.assign(this, { room, token, onWelcome, onEvent, onError, onStatus, onRejected, onRemoved });
    this.lastSeq = since;
    this.attempt = 0;
    // Ids unique across page loads: the room acks a resent (id, frame) it already applied
    // without applying it again, so an old id must never come back with the same content.
    this.idPrefix = Math.random().toString(36).slice(2, 10);
    this.nextId = 1;
    this.pending = new Map();
    this.ws = null;
    this.welcomed = false; // the current socket has had its welcome: commands may go out
    this.timer = null;
    this.stopped = false;
    window.addEventListener("online", () => this.retryNow());
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    this.failPending();
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws/${encodeURIComponent(this.room)}`);
    this.ws = ws;
    this.welcomed = false;
    this.onStatus({ state: "connecting" });
    // No token: a spectator's read-only socket (protocol.md, "Spectators").
    const hello = this.token ? { type: "hello", token: this.token, since: this.lastSeq }
      : { type: "hello", watch: true, since: this.lastSeq };
    ws.onopen = () => ws.send(JSON.stringify(hello));
    ws.onmessage = (msg) => this.receive(JSON.parse(msg.data));
    ws.onclose = (ev) => this.lost(ws, ev.code, ev.reason);
  }

  lost(ws, code, reason) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.welcomed = false;
    clearInterval(this.pinger);
    // Commands still unanswered stay pending: they are resent, same id, after the next welcome.
    if (code === POLICY_VIOLATION) {
      this.stopped = true;
      this.failPending();
      this.onRejected(reason);
    } else if (code === REMOVED) {
      if (this.stopped) return;
      this.stopped = true;
      this.failPending();
      this.onRemoved?.(reason);
    } else if (code === MOVED && !this.stopped) {
      clearTimeout(this.timer);
      this.open(); // at once: the same token, another seat
    } else if (!this.stopped) {
      this.scheduleRetry();
    }
  }

  scheduleRetry() {
    const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** this.attempt);
    // Jitter, so a table of phones that lost the same Wi-Fi does not come back in lockstep.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.attempt += 1;
    this.onStatus({ state: "offline", retryAt: Date.now() + delay });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  retryNow() {
    if (this.stopped || this.ws) return;
    clearTimeout(this.timer);
    this.open();
  }

  keepAlive() {
    clearInterval(this.pinger);
    const ws = this.ws;
    this.pinger = setInterval(() => {
      // A dead link may never finish the closing handshake: give up on it at once.
      const late = setTimeout(() => {
        ws.close();
        this.lost(ws, null);
      }, PING_TIMEOUT_MS);
      this.send({ type: "ping" }).then(() => clearTimeout(late), () => clearTimeout(late));
    }, PING_EVERY_MS);
  }

  receive(frame) {
    if (frame.type === "welcome") {
      this.attempt = 0;
      const replayFrom = this.lastSeq;
      this.lastSeq = frame.seq;
      this.welcomed = true;
      this.onStatus({ state: "online" });
      for (const [id, waiter] of this.pending) {
        // A command that never left the page may have outlived what it was meant for (a chat line
        // for a phase that ended while offline): it is dropped rather than sent into the present.
        // One that did leave is resent as it is: the room acks it again if it applied it.
        if (!waiter.sent && waiter.expired?.(frame)) {
          this.pending.delete(id);
          waiter.reject({ code: "expired" });
        } else {
          this.ws.send(waiter.text);
          waiter.sent = true;
        }
      }
      this.keepAlive();
      this.onWelcome(frame, replayFrom);
    } else if (frame.type === "event") {
      // Replayed events (seq <= welcome's seq) are already in the view; the app uses them for its feed only.
      const fresh = frame.seq > this.lastSeq;
      if (fresh) this.lastSeq = frame.seq;
      this.onEvent(frame, fresh);
    } else if (frame.type === "ack") {
      this.settle(frame.id, null);
    } else if (frame.type === "error") {
      if (frame.id != null && this.pending.has(frame.id)) this.settle(frame.id, frame);
      else this.onError(frame);
    }
  }

  settle(id, error) {
    const waiter = this.pending.get(id);
    if (!waiter) return;
    this.pending.delete(id);
    if (error) waiter.reject(error);
    else waiter.resolve();
  }

  failPending() {
    for (const waiter of this.pending.values()) waiter.reject({ code: "disconnected" });
    this.pending.clear();
  }

  // Resolves on the server's ack, rejects with the error frame. Until a socket has its welcome
  // the frame waits with the unanswered ones and goes out after the next welcome, unless
  // `expired(welcome)` says it no longer should (it then rejects with code "expired").
  send(frame, { expired } = {}) {
    if (this.stopped) return Promise.reject({ code: "disconnected" });
    const id = `${this.idPrefix}-${this.nextId++}`;
    const text = JSON.stringify({ ...frame, id });
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject, text, expired, sent: false };
      this.pending.set(id, waiter);
      if (this.welcomed && this.ws.readyState === WebSocket.OPEN) {
        this.ws.send(text);
        waiter.sent = true;
      }
    });
  }
}
