// What every screen of the page shares: the state of the seats it holds (`app`), sending a
// command, the names, and the little pieces of the lobby's and the table's lists. main.js routes
// and renders; js/screens/*.js draw one screen each; js/eventlines.js words the events.
import { t, has, isolate } from "./i18n.js";
import { el } from "./dom.js";
import { errorText } from "./http.js";
import { toast } from "./toast.js";
import { eventText } from "./eventlines.js";
import { promptKey } from "./state.js";

// The page's one render (main.js's): screens ask for it after a change of their own.
let renderPage = () => {};
export function setRender(fn) {
  renderPage = fn;
}
export function render() {
  renderPage();
}

export const HIDE_CARD_KEY = "ww:hide-card";

export const $ = (sel) => document.querySelector(sel);

export const app = {
  room: null, connStatus: null,
  links: [], // the seats this page holds (seatLink): its own, or every player's on a phone passed around
  here: null, // the seat whose screen shows (a spectator's and the passed phone's table: seat null)
  chatTab: null, chatPinned: false, renderQueued: false,
  composerChannel: null, drafts: {},
  settingsPending: 0, settingsSent: null,
  nextWatch: null, // polls a finished room's lobby facts for the next game at this table
  cardHidden: localStorage.getItem(HIDE_CARD_KEY) === "1", // a phone shared at the table
  watching: false, // a spectator's page: no seat, the public table only
  pass: null, // one phone passed around: {calling, holder, rounds} (pass.js decides whose turn it is)
  turn: null, // announces this seat's prompts (title, vibration, sound)
  sound: null, // the table's sounds (sound.js)
  narrator: null, // speaks the game aloud for a table playing face to face (narrator.js)
  dawn: null,
  endReview: null, // a finished game's review: {room, events, over}, whose secrets the end tells
};

export function showScreen(id) {
  for (const s of document.querySelectorAll(".screen")) s.hidden = s.id !== id;
  if (document.body.dataset.screen === id) return;
  document.body.dataset.screen = id;
  window.scrollTo(0, 0); // a new screen opens at its top, not where the last one was scrolled to
}

export const tokenKey = (room) => `ww:token:${room}`;

// `expired` is passed to the connection; `explain(err)` may word a refusal for its context ("": say
// nothing, null: the error's own words).
// `link`: the seat that sends it (on a phone passed around, a voter of the table's screen).
export function send(frame, { expired, explain } = {}, link = app.here) {
  if (!link?.conn) return Promise.reject({ code: "disconnected" });
  return link.conn.send(frame, { expired }).catch((err) => {
    const text = explain?.(err) ?? errorText(err);
    if (text) toast(text);
    throw err;
  });
}

// One phase, told apart from a later phase of the same name (a second hunter's shot in a day).
export function phaseKey(view) {
  return `${view.phase}@${view.deadline}`;
}

export function scheduleRender() {
  if (app.renderQueued) return;
  app.renderQueued = true;
  queueMicrotask(() => {
    app.renderQueued = false;
    render();
  });
}

export const roleName = (role) => (role ? t(`role.${role}`) : t("role.unknown"));

export function nameOf(seat) {
  if (seat == null) return t("players.nobody");
  const v = app.here.view;
  const s = (v.seats || []).find((x) => x.seat === Number(seat)) || v.players.find((x) => x.seat === Number(seat));
  return s ? isolate(s.name) : `#${seat}`;
}

// What this seat has answered (its "Sent"), kept by this tab across a reload: a welcome's view
// holds the seat's vote, not every answer. Only the prompts still open are kept.
const answeredKey = (link) => `ww:answered:${app.room}:${link.seat}`;

export function rememberAnswered(link) {
  sessionStorage.setItem(answeredKey(link), JSON.stringify(link.answered));
}

export function recallAnswered(link) {
  const v = link.view;
  const open = new Set([...(v.prompts || []).map(promptKey), promptKey({ action: "vote.request", deadline: v.deadline })]);
  let kept = {};
  try {
    kept = JSON.parse(sessionStorage.getItem(answeredKey(link)) || "{}");
  } catch {
    // not ours, or cut short: nothing kept
  }
  link.answered = Object.fromEntries(Object.entries({ ...kept, ...link.answered }).filter(([key]) => open.has(key)));
}

// On a phone passed around the page holds the host's seat too.
export function isHost(v) {
  return app.pass ? true : v.host === app.here.seat;
}

export function cardHidden() {
  return app.cardHidden && !app.pass; // the covers hide a passed phone's cards
}

// What a player entry's moderation controls need (none on a phone passed around).
export function toolsContext(v, lobby) {
  if (app.pass) return null;
  return { room: app.room, v, me: app.here.seat, token: app.links[0]?.token, lobby, host: isHost(v),
    send: (frame) => send(frame), changed: () => render() };
}

// A card none of the table holds (the plain wolves, all seats taken by named ones) is no chip.
export function roleChips(rolesInPlay) {
  return Object.entries(rolesInPlay || {}).filter(([, n]) => n > 0).map(([role, n]) =>
    el("li", { class: "chip", "data-role": role, text: n > 1 ? `${roleName(role)} ×${n}` : roleName(role) }));
}

// Every wolf dealt: the pack's cards and each role the rules call a wolf (the declaration's flag).
export function wolvesDealt(rolesInPlay) {
  const declared = app.declared;
  const wolves = new Set([declared?.pack, ...(declared?.roles || []).filter((r) => r.wolf).map((r) => r.id)]);
  return Object.entries(rolesInPlay || {}).reduce((sum, [role, n]) => sum + (wolves.has(role) ? n : 0), 0);
}

// rules.settings.units_in_play: a special role when dealt, every other unit (the pack, the day,
// the mayor) always, unless a rule of its own takes it out (its `off` value: "Mayor: none").
function unitStatus(v) {
  const rip = v.roles_in_play || {};
  const declared = app.declared;
  const dealable = new Set((declared?.roles || []).map((r) => r.id));
  const present = (unit) => !dealable.has(unit) || rip[unit] > 0;
  const off = new Set((declared?.rules || []).filter((r) => r.off != null && v.settings?.rules?.[r.id] === r.off)
    .map((r) => r.owner));
  return { present, inPlay: (unit) => present(unit) && !off.has(unit) };
}

// A house rule shows while its owner is in play (its switch while the owner is at the table),
// and only where it differs from seed 000, which everyone knows.
export function shownRules(v, all = false) {
  const units = unitStatus(v);
  return (app.declared?.rules || []).filter((r) => (units.inPlay(r.owner) || (r.off != null && units.present(r.owner)))
    && (all || v.settings?.rules?.[r.id] !== r.default));
}

// The durations of the units in play: the only phases this table times.
export function shownDurations(v) {
  const units = unitStatus(v);
  const owners = app.declared?.duration_owners || {};
  return Object.keys(v.settings?.durations || {}).filter((k) => units.inPlay(owners[k]));
}

export function ruleValue(id, value) {
  return has(`rule.${id}.${value}`) ? t(`rule.${id}.${value}`) : String(value);
}

export function durationLabel(key) {
  return has(`duration.${key}`) ? t(`duration.${key}`) : key;
}

export function connDot(connected) {
  const label = connected ? t("players.online") : t("players.offline");
  return el("span", { class: `dot ${connected ? "on" : "off"}`, role: "img", "aria-label": label, title: label });
}

export function phaseLabel(v) {
  return has(`phase.${v.phase}`) ? t(`phase.${v.phase}`) : v.phase;
}

export function feedText(ev, next) {
  return eventText(ev, { nameOf, roleName, seat: app.here.seat, next });
}
