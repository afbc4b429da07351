// The table's motion, started by the live events that change what it shows: night falls or day
// breaks (the veil over the page), a card is shown (your card at the deal, a card a death or the
// Idiot reveals), a seat dies, a vote or the pack's pointing goes in (its arrow is drawn). Renders
// keep the table's nodes where they can (dom.rebuild); a node drawn anew while its animation runs
// is given the time it has already run (a negative delay) and goes on rather than starting over.
// A welcome or a replayed history starts nothing: a reloaded page is still. motion.css holds the
// keyframes, and turns them all off under prefers-reduced-motion.
const isNight = (phase) => String(phase).startsWith("night.");
const LENGTH_MS = { card: 900, seat: 1100, arrow: 600 };
// "card", "seat:N", "arrow:N" -> performance.now() when the browser started its animation (null
// till then: a page slow to draw still shows the whole of it). The node drawn carries the key
// (data-motion), for the animationstart that starts the clock.
const started = new Map();

export function start(key) {
  started.set(key, null);
}

// The inline style that carries `key`'s animation on, or null once it has run (or never started).
export function motionStyle(key) {
  if (!started.has(key)) return null;
  const ms = LENGTH_MS[key.split(":")[0]];
  const at = started.get(key);
  if (at == null) return `animation-duration:${ms}ms`;
  const elapsed = performance.now() - at;
  if (elapsed >= ms) {
    started.delete(key);
    return null;
  }
  return `animation-duration:${ms}ms;animation-delay:${-Math.round(elapsed)}ms`;
}

export function reducedMotion() {
  return matchMedia("(prefers-reduced-motion: reduce)").matches;
}

function veil(sky) {
  const node = document.querySelector("#veil");
  node.removeAttribute("data-sky");
  void node.offsetWidth; // a new animation even when the last one of the same name has not ended
  node.dataset.sky = sky;
}

// Every live event of the table's stream, with the phase the view had before it.
export function see(ev, before) {
  switch (ev.kind) {
    case "phase":
      if (isNight(ev.phase) !== isNight(before)) veil(isNight(ev.phase) ? "nightfall" : "daybreak");
      break;
    case "role":
      start("card");
      break;
    case "death":
    case "idiot_revealed":
      start(`seat:${ev.seat}`);
      break;
    case "voted":
    case "pointed":
      start(`arrow:${ev.seat}`);
      break;
  }
}

export function bind() {
  document.addEventListener("animationstart", (e) => {
    const key = e.target.closest?.("[data-motion]")?.dataset.motion;
    if (key && started.has(key) && started.get(key) == null) started.set(key, performance.now() - e.elapsedTime * 1000);
  }, true);
  const node = document.querySelector("#veil");
  node.addEventListener("animationend", () => node.removeAttribute("data-sky"));
}
