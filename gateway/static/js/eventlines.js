// Every event's line, for the table's feed, the lobby's news and the review alike, from the
// server's declaration of its kind (GET /api/rules "events": its fields, who hears it, what it
// means; rules/events.py) and the catalogues' `event.<kind>` keys (variants `event.<kind>.<x>`).
// No kind is dropped for being unknown: its fields fill `event.<kind>`, or else its declared
// meaning or a generic line shows.
import { t, has, isolate } from "./i18n.js";

const EVERYONE = "everyone"; // rules/events.py EVERYONE: every seat and spectator hears it
let declared = {};

// The declaration's `events` ({kind: {fields, optional, audience, doc}}), fetched once per page.
export function declare(events) {
  declared = events || {};
}

export function declaredKinds() {
  return Object.keys(declared);
}

// Heard by everyone while the game ran. An undeclared kind: by whom it was sent to when the event
// says so (a review keeps each event's `to`), else as if told to one seat alone.
export function isPublic(ev) {
  const d = declared[ev.kind];
  if (d) return d.audience === EVERYONE;
  return "to" in ev && ev.to == null;
}

// What these say the game's screen shows elsewhere (the lobby's lists, the players, the prompts,
// the card, the chat): they stay out of the feed. Every other kind is in it, declared or not.
export const SHOWN_ELSEWHERE = new Set(["presence", "spectators", "settings", "table", "countdown", "away", "remove_vote",
  "prompt", "prompt_closed", "voted", "vote_requested", "pointed", "role", "wolves", "cards", "witch_victim", "chat",
  "clock"]);
export const inFeed = (kind) => !SHOWN_ELSEWHERE.has(kind);
// The lobby's last lines.
export const LOBBY_NEWS = new Set(["joined", "removed"]);
// Not in the review's timeline: the lobby, the prompts (their answers are), the deal and the end
// (shown above it), each seat's copy of the cards, and the infection, which the end's story tells
// with who infected whom (the infected's own event names neither); chat lines show as chat.
export const REVIEW_SKIPS = new Set(["joined", "presence", "settings", "spectators", "table", "countdown",
  "prompt", "prompt_closed", "wolves", "cards", "game_started", "game_over", "infected", "clock"]);
// On a phone passed around, what a seat was told alone is news it must hold the phone to see;
// not a wolf's pointing (the pack sees it when called for its own prompt), nor its prompts.
export const NOT_NEWS = new Set(["pointed", "prompt", "prompt_closed", "chat"]);
export const isPrivateNews = (ev) => !NOT_NEWS.has(ev.kind) && !isPublic(ev);

const SEAT_FIELDS = new Set(["seat", "target", "victim", "moved"]);

// `ctx`: { nameOf(seat), roleName(role), seat (who heard it: this page's seat, the review's
// addressee), next (the event after it, in the feed), review (the review's whole story: cards,
// the final deal, causes, the hidden deaths' true causes) }.
export function eventText(ev, ctx) {
  const c = { nameOf: (s) => (s == null ? t("players.nobody") : `#${s}`), roleName: (r) => r ?? "?", ...ctx };
  let text = null;
  try {
    text = LINES[ev.kind]?.(ev, c);
  } catch { /* a payload the line does not expect: the generic line below */ }
  return text || generic(ev, c);
}

function value(field, v, c) {
  if (typeof v === "boolean") return t(v ? "event.yes" : "event.no");
  if (v == null) return SEAT_FIELDS.has(field) ? c.nameOf(null) : "—";
  if (SEAT_FIELDS.has(field) && typeof v === "number") return c.nameOf(v);
  if (field === "role") return c.roleName(v);
  if (field === "action") return has(`action.${v}.title`) ? t(`action.${v}.title`) : String(v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === "number" ? c.nameOf(x) : typeof x === "string" ? c.roleName(x) : "")).filter(Boolean).join(", ");
  if (typeof v === "object") return "";
  return String(v);
}

// `event.<kind>` with the event's fields as placeholders ({name}: the seat's, or the hearer's).
function generic(ev, c) {
  const vars = { kind: ev.kind, name: c.nameOf("seat" in ev ? ev.seat : c.seat) };
  for (const [field, v] of Object.entries(ev)) if (field !== "kind" && field !== "to") vars[field] = value(field, v, c);
  if (typeof ev.name === "string") vars.name = isolate(ev.name);
  if (has(`event.${ev.kind}`)) return t(`event.${ev.kind}`, vars);
  return declared[ev.kind]?.doc || t("event.unknown", { kind: ev.kind });
}

const names = (seats, c) => seats.map(c.nameOf).join(", ");

// One of the night's secret deeds that the end tells (game_over's `story`: night, seat, what,
// targets; rules/table.py `remember`), in the words of `story.<what>`.
export function storyText(entry, c) {
  const vars = { name: c.nameOf(entry.seat), target: names(entry.targets || [], c) };
  return has(`story.${entry.what}`) ? t(`story.${entry.what}`, vars)
    : t("story.unknown", { ...vars, what: entry.what, targets: vars.target });
}

// Not among the end's secrets: what the review shows beside its timeline or the end elsewhere (the
// deal, the chat), and the pack's pointing and the Witch's view of it, which the night's deeds say.
const END_SKIPS = new Set([...REVIEW_SKIPS, "chat", "role", "pointed", "witch_victim"]);
const DAWN_KINDS = new Set(["death", "bread", "powers_lost"]);

// What a finished game kept secret while it ran, from its review (`events`: the stored log with
// each event's `to`; `over`: its game_over): what only some seats were told (readings, links,
// strikes), the deaths whose cause the table did not hear (with it), and the story's deeds no
// event told, each night's before its dawn, as the review's timeline places them. Each item:
// { night, day, kind, what, text } in the game's order.
export function secrets(events, over, c) {
  const causes = over?.causes || {};
  const ctx = { ...c, review: { cards: over?.roles || {}, causes } };
  const items = [];
  let night = true;
  let day = 1;
  for (const ev of events) {
    if (ev.kind === "phase") [night, day] = [String(ev.phase).startsWith("night."), ev.day];
    const hidden = ev.kind === "death" && ev.seat in causes;
    if (END_SKIPS.has(ev.kind) || (isPublic(ev) && !hidden)) continue;
    const seat = ev.to?.length === 1 ? ev.to[0] : null;
    items.push({ night, day, kind: ev.kind, what: null, text: eventText(ev, { ...ctx, seat }) });
  }
  return placeStory(items, over?.story, (entry) => ({ night: true, day: entry.night, kind: "story", what: entry.what,
    text: storyText(entry, c) }));
}

// The story's deeds (game_over's `story`) placed among a game's items ({night, day, kind}, in
// the game's order), each made by `make(entry)`: in its night, before that night's dawn (its
// deaths, the bread, the powers lost), else after whatever came before that dawn.
export function placeStory(items, story, make) {
  for (const entry of story || []) {
    let at = items.findIndex((item) => item.night && item.day === entry.night && DAWN_KINDS.has(item.kind));
    if (at < 0) at = items.findLastIndex((item) => (item.night ? item.day <= entry.night : item.day < entry.night)) + 1;
    items.splice(at, 0, make(entry));
  }
  return items;
}

// The seats the story says were infected: the end shows their card as infected.
export const infectedSeats = (story) => new Set((story || [])
  .filter((entry) => entry.what === "infect_father.infected").flatMap((entry) => entry.targets));
const phaseName = (phase) => (has(`phase.${phase}`) ? t(`phase.${phase}`) : phase);
const causeText = (cause) => (has(`cause.${cause}`) ? t(`cause.${cause}`) : t("cause.unknown", { cause }));
export const dayLabel = (phase, day) => t(String(phase).startsWith("night") ? "game.night" : "game.day", { n: day });
// The seat holding `role` in the review's final deal.
const holder = (role, c) => {
  const hit = Object.entries(c.review?.cards || {}).find(([, r]) => r === role);
  return hit ? Number(hit[0]) : null;
};
const pointing = (ev, c) => Object.entries(ev.pointing).map(([letter, target]) =>
  t("event.peeked.wolf", { letter, name: target == null ? "—" : c.nameOf(target) })).join(", ");

// The kinds whose line needs more than their fields: a variant, a name the event does not carry.
const LINES = {
  phase: (ev, c) => (c.review ? phaseName(ev.phase) : t("event.phase", { phase: phaseName(ev.phase), day: dayLabel(ev.phase, ev.day) })),
  death: (ev, c) => {
    const cause = causeText(c.review?.causes?.[ev.seat] ?? ev.cause);
    const role = ev.role ?? c.review?.cards?.[ev.seat];
    // seed 004 may keep the card hidden until the end (role null)
    return role == null ? t("event.death.hidden", { name: c.nameOf(ev.seat), cause })
      : t("event.death", { name: c.nameOf(ev.seat), cause, role: c.roleName(role) });
  },
  mayor: (ev, c) => (ev.seat == null ? t("event.mayor.none")
    : t(ev.how === "successor" ? "event.mayor.successor" : "event.mayor", { name: c.nameOf(ev.seat) })),
  vote_result: (ev, c) => {
    if (ev.phase === "day.election" || ev.phase === "day.runoff") {
      return ev.target == null && ev.tie?.length > 1 ? t("event.vote_result.tie", { names: names(ev.tie, c) })
        : t("event.vote_result.election", { name: c.nameOf(ev.target) });
    }
    if (ev.phase === "day.tiebreak") {
      return ev.target == null ? t("event.vote_result.tiebreak_none") : t("event.vote_result.tiebreak", { name: c.nameOf(ev.target) });
    }
    const result = ev.target == null ? t("event.vote_result.none") : t("event.vote_result", { name: c.nameOf(ev.target) });
    if (!(ev.tie?.length > 1)) return result;
    const tied = names(ev.tie, c);
    if (ev.target != null || c.review) return `${t("event.vote_result.tie", { names: tied })} ${result}`;
    // What a tie leads to is told by its own result (a lot, the scapegoat) or by the event
    // after it: the mayor's tie-break, a revote, or the night.
    const next = c.next;
    if (!next || (next.kind === "phase" && next.phase === "day.revote")) return t("event.vote_result.tied", { names: tied });
    return t(next.kind === "phase" && next.phase === "day.tiebreak" ? "event.vote_result.tied_mayor" : "event.vote_result.tied_nobody", { names: tied });
  },
  seer_result: (ev, c) => (c.review
    ? t("event.seer_result.review", { name: c.nameOf(c.seat ?? holder("seer", c)), target: c.nameOf(ev.seat), role: c.roleName(ev.role) })
    : t("event.seer_result", { name: c.nameOf(ev.seat), role: c.roleName(ev.role) })),
  lovers: (ev, c) => {
    if (c.review) return t("event.lovers.review", { names: ev.lovers.map(c.nameOf).join(" ♥ ") });
    return ev.lovers.includes(c.seat) ? t("event.lovers", { name: c.nameOf(ev.lovers.find((s) => s !== c.seat) ?? c.seat) })
      : t("fact.linked", { names: ev.lovers.map(c.nameOf).join(" ♥ ") });
  },
  pointed: (ev, c) => (ev.target == null ? t("event.pointed.none", { name: c.nameOf(ev.seat) })
    : t("event.pointed", { name: c.nameOf(ev.seat), target: c.nameOf(ev.target) })),
  witch_victim: (ev, c) => t("event.witch_victim", { name: c.nameOf(c.seat ?? holder("witch", c)), target: c.nameOf(ev.victim) }),
  role: (ev, c) => t("event.role", { name: c.nameOf(c.seat), role: c.roleName(ev.role) }),
  voted: (ev, c) => (ev.target == null ? t("event.voted.none", { name: c.nameOf(ev.seat) })
    : t("event.voted", { name: c.nameOf(ev.seat), target: c.nameOf(ev.target) })),
  scapegoat_voters: (ev, c) => t("event.scapegoat_voters", { names: names(ev.voters, c) }),
  talkative_seer: (ev, c) => (ev.role == null ? t("event.talkative_seer.none") : t("event.talkative_seer", { role: c.roleName(ev.role) })),
  peeked: (ev, c) => (c.review ? t("event.peeked.review", { name: c.nameOf(c.seat), pointing: pointing(ev, c) })
    : t("event.peeked", { pointing: pointing(ev, c) })),
  little_girl_caught: (ev, c) => t(c.review ? "event.little_girl_caught.review" : "event.little_girl_caught", { name: c.nameOf(ev.seat) }),
  medium_result: (ev, c) => (c.review
    ? t("event.medium_result.review", { name: c.nameOf(c.seat ?? holder("medium", c)), target: c.nameOf(ev.seat), role: c.roleName(ev.role) })
    : t("event.medium_result", { name: c.nameOf(ev.seat), role: c.roleName(ev.role) })),
  charmed: (ev, c) => t("event.charmed", { names: names(ev.charmed, c) }),
  traitor_pack: (ev, c) => t("event.traitor_pack", { names: names(ev.wolves, c) }),
  infected: (ev, c) => t("event.infected", { names: names(ev.wolves, c) }),
  lover_pair: (ev, c) => t("event.lover_pair", { name: c.nameOf(ev.lovers.find((s) => s !== c.seat)) }),
  thief_cards: (ev, c) => t("event.thief_cards", { first: c.roleName(ev.cards[0]), second: c.roleName(ev.cards[1]) }),
  bot_seat: (ev, c) => t(ev.bot ? "event.bot_seat" : "event.bot_seat.back", { name: c.nameOf(ev.seat) }),
  joined: (ev) => (ev.bot ? t("event.joined.bot", { name: isolate(ev.name) }) : null),
  removed: (ev) => t(["left", "vote", "away"].includes(ev.reason) ? `event.removed.${ev.reason}` : "event.removed", { name: isolate(ev.name) }),
};
