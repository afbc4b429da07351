// One phone passed around the table: the page holds every player's seat (a socket and a view
// each, as online) and decides whose screen may show. It knows no rules: a seat is called when
// its view has a prompt open at night or it received news meant for it alone.
import { promptKey } from "./state.js";

export const MAX_PLAYERS = 12; // the seed's limit on one phone
export const MIN_NAMES = 4;

// What a seat learns alone: it must hold the phone to see it. (A wolf's "pointed" is not: the
// pack sees it when called for its own prompt.)
const PRIVATE_NEWS = new Set(["role", "wolves", "lovers", "seer_result", "medium_result", "traitor_pack",
  "lover_pair", "infected", "thief_cards", "cards", "peeked", "little_girl_caught", "charmed", "witch_victim"]);
// The feed of the table's own screen: what every seat was told.
const PUBLIC_FEED = new Set(["game_started", "phase", "death", "mayor", "vote_result", "candidate", "idiot_revealed",
  "powers_lost", "scapegoat_voters", "talkative_seer", "bread", "game_over"]);
// The view's fields every seat has alike (protocol.md "Welcome and view"); all others are a seat's own.
const PUBLIC_FIELDS = ["room", "status", "host", "players", "settings", "spectators", "roles_in_play",
  "phase", "day", "deadline", "votes", "tally", "waiting", "mayor", "outcome", "final"];

export const isNight = (phase) => String(phase).startsWith("night.");

export function isPrivateNews(kind) {
  return PRIVATE_NEWS.has(kind);
}

// Where the page keeps the seats of a table passed around: [{seat, name, token, seen}], seat order.
const storeKey = (room) => `ww:pass:${room}`;

export function loadSeats(room) {
  try {
    const seats = JSON.parse(localStorage.getItem(storeKey(room)));
    return Array.isArray(seats) && seats.length ? seats : null;
  } catch {
    return null;
  }
}

export function saveSeats(room, seats) {
  localStorage.setItem(storeKey(room), JSON.stringify(seats));
}

export function forgetSeats(room) {
  localStorage.removeItem(storeKey(room));
}

// Night prompts the seat has neither answered nor put down ("done" without acting).
function openPrompts(link) {
  const v = link.view;
  if (!v || v.status !== "running" || !isNight(v.phase)) return [];
  return (v.prompts || []).filter((p) => !(promptKey(p) in link.answered) && !link.dismissed.has(promptKey(p)));
}

export function needsCall(link) {
  return link.view?.status === "running" && (link.news > 0 || openPrompts(link).length > 0);
}

// The next player to take the phone: first whoever has a night prompt open (its step's clock is
// running), then whoever has news, each in seat order; null when the table's screen may show.
export function nextCall(links) {
  return links.find((l) => openPrompts(l).length) ?? links.find(needsCall) ?? null;
}

// A seat leaving the phone: its open prompts are put down, its news seen (and kept as seen, so
// that a reloaded page calls it again only for what came later).
export function putDown(room, link) {
  for (const p of openPrompts(link)) link.dismissed.add(promptKey(p));
  link.news = 0;
  link.seen = link.feedSeq;
  const seats = loadSeats(room);
  if (seats) saveSeats(room, seats.map((s) => (s.seat === link.seat ? { ...s, seen: link.seen } : s)));
}

// The table's own screen, shown to everybody: only the fields every seat has alike, and of the
// cards only those a seat knows of another (a seat's own card is in its view alone).
export function publicView(links) {
  const base = links[0].view;
  const view = Object.fromEntries(PUBLIC_FIELDS.filter((k) => k in base).map((k) => [k, base[k]]));
  const cardOf = (seat) => {
    const other = links.find((l) => l.seat !== seat);
    return other?.view.seats?.find((s) => s.seat === seat)?.role ?? null;
  };
  view.seats = (base.seats || []).map((s) => ({ ...s, role: cardOf(s.seat) }));
  view.requests = base.requests ? { count: base.requests.count, needed: base.requests.needed, mine: false } : null;
  return { ...view, me: null, prompts: [], pointing: {}, chat: {}, channels: [] };
}

export function publicFeed(links) {
  return links[0].feed.filter((ev) => PUBLIC_FEED.has(ev.kind));
}
