// One phone passed around the table: the page holds every player's seat (a socket and a view
// each, as online) and decides whose screen may show. It knows no rules: it goes round the table
// once for each night step the server opens (and by day once when a seat was told something
// alone), and in each round every living seat takes the phone in seat order, whatever it has then.
import { promptKey } from "./state.js";
import { inFeed, isPublic, isPrivateNews as privateNews } from "./eventlines.js";

export const MAX_PLAYERS = 12; // the seed's limit on one phone
export const MIN_NAMES = 4;

// The feed of the table's own screen: what every seat was told (the declared audience, eventlines.js).
const publicNews = (ev) => inFeed(ev.kind) && isPublic(ev);
// The view's fields every seat has alike (protocol.md "Welcome and view"); all others are a seat's own.
const PUBLIC_FIELDS = ["room", "status", "host", "players", "settings", "spectators", "roles_in_play",
  "phase", "day", "deadline", "votes", "tally", "waiting", "mayor", "outcome", "final"];

export const isNight = (phase) => String(phase).startsWith("night.");

// What a seat learns alone: it must hold the phone to see it (eventlines.js).
export function isPrivateNews(ev) {
  return privateNews(ev);
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
  localStorage.removeItem(`${storeKey(room)}:online`);
}

// A table whose host went from its online lobby to this phone (screens/pass.js addPhoneSeat):
// its link stays on the phone's lobby, for the players online.
export function markOnline(room) {
  localStorage.setItem(`${storeKey(room)}:online`, "1");
}

export function invitesOnline(room) {
  return localStorage.getItem(`${storeKey(room)}:online`) === "1";
}

// Night prompts the seat has neither answered nor put down ("done" without acting).
function openPrompts(link) {
  const v = link.view;
  if (!v || v.status !== "running" || !isNight(v.phase)) return [];
  return (v.prompts || []).filter((p) => !(promptKey(p) in link.answered) && !link.dismissed.has(promptKey(p)));
}

// The phone's turns (docs/architecture.md, "Pass-and-play"). The server opens the night's steps
// one after another (a later one may need an earlier one's answer: the Witch sees the pack's
// victim), so the phone cannot ask each seat once for the whole night: each step is one round,
// in which every living seat, in seat order, gets a cover and its own screen (its prompt, its
// news, or nothing to do), whether it wakes in that step or not. The number and the order of the
// covers follow the night's steps and who is alive, all public, never the cards; a step lasts
// until the phone has gone round (round_done), each turn with its own time (issue 35).
// `rounds`: [{night, seats, at, ...its step}], the first one going round; `steps`: the night steps
// seen; `idle`: the holder said so on a turn with nothing to do; `answered`: how many prompts the
// holder had answered when it took the phone; `dealing`: the game started, its first phase not yet;
// `turnEnds`: when the holder's night turn is up (ms), its own time counted from the tap;
// `marking`: the seats the lobby is being marked as played on this phone with (screens/pass.js);
// `seats`: the seats this phone holds; a table may have others, online, each on its own device
// (RULES.md "One phone + online"): the phone never calls them.
export function newPhone(fresh, seats) {
  return { calling: null, holder: null, fresh, rounds: [], steps: new Set(), idle: false, answered: 0, dealing: false,
    turnEnds: null, marking: null, seats: [...seats].sort((a, b) => a - b) };
}

// The living seats on this phone, in seat order: those its rounds call.
const livingSeats = (phone, view) => (view.seats || []).filter((s) => s.alive && phone.seats.includes(s.seat))
  .map((s) => s.seat).sort((a, b) => a - b);

// Some seats of the table play online: a night step then lasts its time whatever the phone does
// (no `round_done`), so that they learn nothing of its pace.
export function withOnline(phone, view) {
  return (view?.seats || view?.players || []).some((s) => !phone.seats.includes(s.seat));
}

// One seat's live event (the first seat's: its stream is the table's), its view updated.
export function noteEvent(phone, view, ev) {
  if (ev.kind === "game_started") phone.dealing = true; // the cards come before the first phase
  if (ev.kind !== "phase") return;
  phone.dealing = false;
  noteStep(phone, view, ev.seq);
}

// A night step began (a seat's view, after its `phase` event `seq` or its welcome): one round more,
// of the seats alive now (the night's dead live until dawn), and the step as it showed then.
export function noteStep(phone, view, seq) {
  if (view?.status !== "running" || !isNight(view.phase)) return;
  const key = `${view.day}:${view.phase}`;
  if (phone.steps.has(key)) return;
  phone.steps.add(key);
  phone.rounds.push({ night: true, seats: livingSeats(phone, view), at: 0, phase: view.phase, day: view.day,
    deadline: view.deadline, waiting: view.waiting ?? null, seq });
}

// What a seat's turn in a night round shows: null, its view as it is, while the round's step
// runs; once that step is over on the server (the pack agreed early, a later step began, the
// night ended), the view as it stood in that step: the step's phase and clock, the seats alive
// then, none of the later steps' prompts (they wait for the seat's turn in their own round),
// none of the public news since. Else whoever holds the phone after the step ended would see
// that it did, and so that whoever ended it held the phone before them.
export function turnView(link, round) {
  const v = link.view;
  if (!round?.night || (v.phase === round.phase && v.day === round.day)) return null;
  const awake = new Set(round.seats);
  const seats = (v.seats || []).map((s) => (awake.has(s.seat) && !s.alive
    ? { ...s, alive: true, role: s.seat === link.seat ? s.role : null } : s));
  const view = { ...v, phase: round.phase, day: round.day, deadline: round.deadline, waiting: round.waiting,
    prompts: [], votes: {}, tally: {},
    requests: null, seats, me: v.me && { ...v.me, alive: awake.has(link.seat) } };
  return { view, feed: link.feed.filter((ev) => !(ev.seq > round.seq && publicNews(ev))) };
}

// By day, when nothing goes round and a living seat was told something alone (a card, the pack):
// one round of every living seat, so that nobody is seen to be called alone.
export function noteNews(phone, links) {
  const view = links[0].view;
  if (phone.rounds.length || phone.dealing || view?.status !== "running" || isNight(view.phase)) return;
  const living = livingSeats(phone, view);
  if (links.some((l) => l.news > 0 && living.includes(l.seat))) phone.rounds.push({ night: false, seats: living, at: 0 });
}

export function currentRound(phone) {
  turn(phone);
  return phone.rounds[0] ?? null;
}

// The seat whose turn it is (its cover shows until it takes the phone), or null: the table's screen.
export function turn(phone) {
  while (phone.rounds.length && phone.rounds[0].at >= phone.rounds[0].seats.length) phone.rounds.shift();
  const round = phone.rounds[0];
  return round ? round.seats[round.at] : null;
}

// The phone sets the night's pace (RULES.md "One phone"): each turn of a night round has its own
// time, the view's `turn` seconds, and the server's step waits for the round (`round_done`, sent
// by the last turn's "Done"; the step's deadline, every living player's turn, is a backstop).
export function turnSeconds(link, round) {
  return round?.night ? link.view?.turn ?? null : null;
}

// The clock a seat's screen shows: its own turn's at night (cut short only by the step's end on
// the server, which the round's length is made to outlast), else the phase's.
export function shownDeadline(phone, view) {
  if (!phone?.holder || phone.turnEnds == null) return view.deadline;
  return view.deadline == null ? phone.turnEnds : Math.min(phone.turnEnds, view.deadline);
}

// The night round this last turn ended, if it did: the server's step may end now (on one phone
// alone: with seats online the step lasts its time).
export function roundDone(phone, round, view) {
  return round?.night && round.at >= round.seats.length && !withOnline(phone, view)
    ? { phase: round.phase, day: round.day } : null;
}

// Rounds of the night still to go round (or going): the dawn waits for them.
export function nightLeft(phone) {
  return phone.rounds.some((r) => r.night);
}

// The player whose turn it is takes the phone; a night turn's own time starts.
export function take(phone, now) {
  const seconds = turnSeconds(phone.calling, phone.rounds[0]);
  phone.turnEnds = seconds == null ? null : now + seconds * 1000;
  phone.holder = phone.calling;
  phone.calling = null;
  phone.holder.news = 0;
  phone.idle = false;
  phone.answered = Object.keys(phone.holder.answered).length; // what it answered before this turn
}

// A turn with nothing to do at night (no prompt, none answered in this turn): its screen has one
// explicit "nothing to do" button, the move of this turn (no pick that goes nowhere).
export function idleTurn(phone, link) {
  const v = link.view;
  return v?.status === "running" && isNight(v.phase) && !(v.prompts || []).length
    && Object.keys(link.answered).length === phone.answered;
}

// Whether the holder may put the phone down: its move is made (every night prompt answered) or,
// with nothing to do, it said so. Never with a move open: "Done" drops nothing (issue 35).
export function turnMade(phone, link) {
  return idleTurn(phone, link) ? phone.idle : !openPrompts(link).length;
}

// A seat leaving the phone: its turn is over, its news seen (and kept as seen, so that a reloaded
// page calls it again only for what came later); what is still open (a prompt the server closed
// meanwhile shows no more) is put down.
export function putDown(room, link, phone) {
  const round = phone?.rounds[0];
  if (round && round.seats[round.at] === link.seat) round.at += 1;
  for (const p of openPrompts(link)) link.dismissed.add(promptKey(p));
  link.news = 0;
  if (phone) {
    phone.idle = false;
    phone.turnEnds = null;
  }
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
  return links[0].feed.filter(publicNews);
}
