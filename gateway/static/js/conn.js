// The WebSocket session: hello with `since`, acks by id, reconnect with backoff and jitter.
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 15000;
const POLICY_VIOLATION = 1008; // the gateway's answer to a bad token
const REMOVED = 4003; // this seat left the table or was removed from it: its token is void
const MOVED = 4004; // this seat's player now sits at another seat: the next welcome names it
// A socket can stay open with nothing coming through it for minutes (a phone that changed
// networks, a silent drop): once it has been quiet a while the page pings, and a ping that hears
// nothing back in time means the link is dead. A drop is told within about 5.5 s:
// QUIET_MS + a tick + PING_TIMEOUT_MS + a tick.
const QUIET_MS = 2000;
const PING_TIMEOUT_MS = 2500;
const TICK_MS = 500;
const PING_ID = "heartbeat"; // answered by the gateway itself, never a room's command id
// A connect that hangs (no welcome) is given up on and tried again.
const WELCOME_TIMEOUT_MS = 15000;

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
    // The browser knows the network is gone: no need to wait for the heartbeat to tell.
    window.addEventListener("offline", () => this.ws && this.abandon(this.ws));
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    this.failPending();
    clearTimeout(this.timer);
    clearTimeout(this.welcomeTimer);
    clearInterval(this.beat);
    if (this.ws) this.ws.close();
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws/${encodeURIComponent(this.room)}`);
    this.ws = ws;
    this.welcomed = false;
    // After a loss (or a failed try) the page says it is reconnecting, not connecting.
    this.onStatus(this.attempt ? { state: "offline" } : { state: "connecting" });
    clearTimeout(this.welcomeTimer);
    this.welcomeTimer = setTimeout(() => this.abandon(ws), WELCOME_TIMEOUT_MS);
    // No token: a spectator's read-only socket (protocol.md, "Spectators").
    const hello = this.token ? { type: "hello", token: this.token, since: this.lastSeq }
      : { type: "hello", watch: true, since: this.lastSeq };
    ws.onopen = () => ws.send(JSON.stringify(hello));
    ws.onmessage = (msg) => {
      if (this.ws !== ws) return; // a socket given up on (abandon) may still deliver
      this.heardAt = performance.now();
      this.receive(JSON.parse(msg.data));
    };
    ws.onclose = (ev) => this.lost(ws, ev.code, ev.reason);
  }

  lost(ws, code, reason) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.welcomed = false;
    clearInterval(this.beat);
    clearTimeout(this.welcomeTimer);
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

  // A dead link may never finish the closing handshake: given up on at once.
  abandon(ws) {
    ws.close();
    this.lost(ws, null);
  }

  // Any frame heard counts as an answer; pings go out only into silence, at most one at a time.
  heartbeat() {
    clearInterval(this.beat);
    const ws = this.ws;
    this.heardAt = performance.now();
    let pingAt = null;
    this.beat = setInterval(() => {
      const now = performance.now();
      if (pingAt != null && this.heardAt < pingAt) {
        if (now - pingAt >= PING_TIMEOUT_MS) this.abandon(ws);
      } else if (now - this.heardAt >= QUIET_MS) {
        pingAt = now;
        ws.send(JSON.stringify({ type: "ping", id: PING_ID }));
      }
    }, TICK_MS);
  }

  receive(frame) {
    if (frame.id === PING_ID) return; // the heartbeat's ack (or rate_limited: a ping too many)
    if (frame.type === "welcome") {
      clearTimeout(this.welcomeTimer);
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
      this.heartbeat();
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
