// The table: every seat around it (an initial in a coloured disc, the name, alive or dead, the
// mayor, the lovers and the pack as this seat knows them, known cards), the day's votes as arrows
// from voter to target with each target's count, the pack's pointing at night, and the phase's
// sun or moon in the middle. It draws only what the view holds: it knows no rules. While a prompt
// asks for a player, the seats it offers are buttons that choose them (`pick`).
import { el, rebuild } from "./dom.js";
import { motionStyle } from "./motion.js";
import { rolePicture } from "./art.js";
import { t } from "./i18n.js";
import { botMark, botSeats } from "./bots.js";

const RADIUS = 40; // % of the table's side, seat centres
const ARROW_RADIUS = 30; // arrows start and end inside the ring of seats

function position(i, n, radius) {
  const angle = -Math.PI / 2 + (2 * Math.PI * i) / n; // seat 0 at the top, clockwise
  return { x: 50 + radius * Math.cos(angle), y: 50 + radius * Math.sin(angle) };
}

function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

export function initial(name) {
  return (Array.from(name.trim())[0] || "?").toLocaleUpperCase();
}

// What this page knows of the lovers: a lover knows the pair, Cupid the couple he made.
function loversOf(v, me) {
  if (v.linked) return v.linked;
  if (v.lover != null && me != null) return [me, v.lover];
  return [];
}

// `me`: the seat of this page (null for a spectator); `hideMine`: the card is hidden at a shared table;
// `pick`: {choices, picked: Sets of seats, choose(seat)} while a prompt asks for a player, else null.
export function renderTable(box, v, { me, hideMine, nameOf, roleName, pick = null }) {
  const seats = v.seats || [];
  const n = seats.length || 1;
  const online = new Map((v.players || []).map((p) => [p.seat, p.connected]));
  const away = new Set((v.players || []).filter((p) => p.away).map((p) => p.seat)); // let turns pass
  const bots = botSeats(v.players);
  const wolves = new Set(v.wolves || []);
  const lovers = new Set(loversOf(v, me));
  const cards = v.cards || {};
  const night = String(v.phase).startsWith("night");
  const arrows = night ? v.pointing || {} : v.votes || {};
  const tally = v.tally || {};

  const lines = Object.entries(arrows).filter(([, target]) => target != null).map(([from, target]) => {
    const a = position(Number(from), n, ARROW_RADIUS);
    const b = position(Number(target), n, ARROW_RADIUS);
    const drawing = motionStyle(`arrow:${from}`);
    return el("svg:line", { x1: a.x.toFixed(2), y1: a.y.toFixed(2), x2: b.x.toFixed(2), y2: b.y.toFixed(2),
      class: `arrow ${night ? "point" : "vote"}${drawing ? " drawing" : ""}`, style: drawing,
      "data-motion": drawing ? `arrow:${from}` : null, pathLength: night ? null : "100",
      "data-key": `arrow:${from}`, "data-from": from, "data-to": target, "marker-end": "url(#arrowhead)" });
  });
  const overlay = el("svg:svg", { class: "arrows", viewBox: "0 0 100 100", "aria-hidden": "true" },
    el("svg:defs", {}, el("svg:marker", { id: "arrowhead", viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "4", markerHeight: "4", orient: "auto-start-reverse" }, el("svg:path", { d: "M0 0 L10 5 L0 10 z" }))),
    lines);

  const nodes = seats.map((s, i) => {
    const p = position(i, n, RADIUS);
    const role = s.seat === me && hideMine ? null : s.role ?? cards[s.seat] ?? cards[String(s.seat)] ?? null;
    const votes = tally[s.seat] ?? tally[String(s.seat)];
    const marks = [];
    // Text marks from plain fonts (no emoji font is assumed); the pack's is the werewolf's own art.
    if (s.mayor || v.mayor === s.seat) marks.push(el("span", { class: "mark mayor", title: t("players.mayor"), "aria-label": t("players.mayor"), role: "img", text: "♛" }));
    if (lovers.has(s.seat)) marks.push(el("span", { class: "mark lover", title: t("table.lover"), "aria-label": t("table.lover"), role: "img", text: "♥" }));
    if (away.has(s.seat)) marks.push(el("span", { class: "mark idle", title: t("mod.away"), "aria-label": t("mod.away"), role: "img", text: "z" }));
    if (bots.has(s.seat)) marks.push(botMark());
    if (wolves.has(s.seat)) marks.push(el("span", { class: "mark wolf", title: t("table.wolf"), "aria-label": t("table.wolf"), role: "img" },
      rolePicture("werewolf", { className: "mark-art" })));
    const label = [s.name, bots.has(s.seat) ? t("bot.label") : null, s.alive ? t("players.alive") : t("players.dead"), role ? roleName(role) : null,
      votes ? t("table.votes_against", { n: votes }) : null].filter(Boolean).join(", ");
    const turning = motionStyle(`seat:${s.seat}`); // a card shown, a death marked, as it happens
    const choosable = pick?.choices.has(s.seat);
    const picked = choosable && pick.picked.has(s.seat);
    return el("li", {
      class: `seat ${s.alive ? "alive" : "dead"}${s.seat === me ? " me" : ""}${turning ? " turning" : ""}`
        + `${choosable ? " choosable" : ""}${picked ? " picked" : ""}`,
      style: `left:${p.x.toFixed(2)}%;top:${p.y.toFixed(2)}%;--hue:${hue(s.name)}`,
      "data-seat": s.seat, "data-alive": s.alive ? "1" : "0", "data-role": role,
      "data-wolf": wolves.has(s.seat) ? "1" : null, "data-lover": lovers.has(s.seat) ? "1" : null,
      "data-mayor": s.mayor || v.mayor === s.seat ? "1" : null, "data-votes": votes || null,
      "data-away": away.has(s.seat) ? "1" : null, "data-bot": bots.has(s.seat) ? "1" : null,
      "data-motion": turning ? `seat:${s.seat}` : null,
      "aria-label": label,
    },
      el("span", { class: "avatar", "aria-hidden": "true", style: turning },
        role ? rolePicture(role, { className: "mini" }) : el("span", { class: "initial", text: initial(s.name) }),
        s.alive ? null : el("span", { class: "rip", text: "✝", style: turning }),
        online.get(s.seat) === false && !bots.has(s.seat) ? el("span", { class: "away" }) : null),
      el("span", { class: "seatname", text: s.name }),
      marks.length ? el("span", { class: "marks" }, marks) : null,
      votes ? el("span", { class: "votes", text: String(votes) }) : null,
      // The seat as the prompt's choice, for a pointer and a keyboard alike (the prompt's own
      // buttons kept in step), named as the seat is read; its data-fk keeps the focus on it
      // when the table is drawn again (a vote lands, the tally moves).
      choosable ? el("button", { type: "button", class: "seat-pick", "aria-label": label,
        "aria-pressed": picked ? "true" : "false", "data-seat": s.seat, "data-fk": `seat:${s.seat}`,
        title: s.name, onclick: () => pick.choose(s.seat) }) : null);
  });

  const centre = el("div", { class: "centre", "aria-hidden": "true" },
    el("span", { class: `sky ${night ? "moon" : "sun"}` }),
    el("span", { class: "centre-day", text: t(night ? "game.night" : "game.day", { n: v.day ?? 1 }) }));
  rebuild(box, [overlay, el("ol", { class: "plain ring", "aria-label": t("players.title") }, nodes), centre]);
}
