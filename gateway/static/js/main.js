// The browser client: renders the seat's view and answers the prompts it receives.
// It holds no rules: what to show comes from the view and the events, what to do from the prompts.
import { LANGS, pickLanguage, setLanguage, t, has, language, keys } from "./i18n.js";
import { Connection } from "./conn.js";
import { applyEvent, promptKey } from "./state.js";
import { el, rebuild } from "./dom.js";
import { rolePicture } from "./art.js";
import { renderTable } from "./table.js";
import { TurnNotifier } from "./notify.js";
import { Dawn } from "./dawn.js";
import * as pass from "./pass.js";
import { api, errorText } from "./http.js";
import { toast } from "./toast.js";
import * as tables from "./tables.js";
import { initLobbyTable, renderLobbyTable } from "./lobbytable.js";
import * as mod from "./moderation.js";
import qrcode from "../vendor/qrcode.mjs";

const FEED_KINDS = new Set(["joined", "game_started", "phase", "death", "mayor", "vote_result", "seer_result", "lovers",
  "candidate", "idiot_revealed", "powers_lost", "scapegoat_voters", "talkative_seer", "peeked", "little_girl_caught", "charmed",
  "medium_result", "traitor_pack", "lover_pair", "bread", "infected", "thief_cards", "game_over", "removed"]);
const LOBBY_NEWS = new Set(["joined", "removed"]); // the lobby's last lines
const LOBBY_NEWS_LIMIT = 4;
const FEED_LIMIT = 80;
// Every card the catalogue explains, in its order: a new role's help comes with its keys.
const helpRoles = () => keys("explain.").map((key) => key.slice("explain.".length));
const HIDE_CARD_KEY = "ww:hide-card";

const $ = (sel) => document.querySelector(sel);
const app = {
  room: null, connStatus: null,
  links: [], // the seats this page holds (seatLink): its own, or every player's on a phone passed around
  here: null, // the seat whose screen shows (a spectator's and the passed phone's table: seat null)
  chatTab: null, chatPinned: false, renderQueued: false,
  composerChannel: null, drafts: {},
  settingsPending: 0, settingsSent: null,
  nextWatch: null, // polls a finished room's lobby facts for the next game at this table
  cardHidden: localStorage.getItem(HIDE_CARD_KEY) === "1", // a phone shared at the table
  watching: false, // a spectator's page: no seat, the public table only
  pass: null, // one phone passed around: {calling, holder} (pass.js decides who is called)
  turn: null, // announces this seat's prompts (title, vibration, sound)
  dawn: null,
};

const NEXT_POLL_MS = 2000;
// The card that stands for the winning side on the end screen.
const BANNER = { no_wolves_alive: "villager", only_wolves_alive: "werewolf", village_side_killed: "werewolf",
  wolves_at_parity: "werewolf", lovers_last_alive: "cupid", piper_charmed_all: "piper" };

function showScreen(id) {
  for (const s of document.querySelectorAll(".screen")) s.hidden = s.id !== id;
  document.body.dataset.screen = id;
}

// ---------- rooms, tokens, routing ----------

const tokenKey = (room) => `ww:token:${room}`;

// A watch link: #/w/CODE (a spectator's page).
function watchFromUrl() {
  const m = location.hash.match(/^#\/w\/([A-Za-z0-9]+)/);
  return m ? m[1].toUpperCase() : null;
}

function watchLink(room) {
  return `${location.origin}${location.pathname}#/w/${room}`;
}

// A table on one phone passed around: #/p/CODE (every seat's token is kept by this page).
function passFromUrl() {
  const m = location.hash.match(/^#\/p\/([A-Za-z0-9]+)/);
  return m ? m[1].toUpperCase() : null;
}

function roomFromUrl() {
  const watched = watchFromUrl() ?? passFromUrl();
  if (watched) return watched;
  const m = location.hash.match(/^#\/r\/([A-Za-z0-9]+)/);
  if (m) return m[1].toUpperCase();
  const q = new URLSearchParams(location.search).get("room");
  return q ? q.toUpperCase() : null;
}

function shareLink(room) {
  return `${location.origin}${location.pathname}#/r/${room}`;
}

function seated(answer) {
  localStorage.setItem(tokenKey(answer.room), answer.token);
  if (roomFromUrl() === answer.room) route();
  else location.hash = `#/r/${answer.room}`;
}

// One seat this page holds: its socket, its view kept current by its events, its feed, what it
// has selected and answered. `seen`, `news`, `dismissed`: on a phone passed around, the last event
// it saw holding the phone, what it was told alone since, the prompts it put down (pass.js).
function seatLink(room, token, onRejected, seen = 0) {
  const link = { seat: null, token, view: null, feed: [], feedSeq: 0, selected: {}, answered: {},
    seen, news: 0, dismissed: new Set() };
  // since=0 on a fresh page: the view comes whole, and the replayed history refills the feed.
  link.conn = new Connection({
    room, token, since: 0,
    onWelcome: (frame) => onWelcome(link, frame),
    onEvent: (ev, fresh) => onEvent(link, ev, fresh),
    onError: (frame) => toast(errorText(frame)),
    onStatus: (status) => link === app.links[0] && showConnStatus(status),
    onRejected,
    onRemoved: (reason) => goneFromTable(link, reason || link.goneReason),
  });
  return link;
}

function dropLinks() {
  for (const link of app.links) link.conn.stop();
  Object.assign(app, { links: [], here: null, pass: null });
  clearInterval(app.nextWatch);
  app.nextWatch = null;
}

async function route() {
  const room = roomFromUrl();
  const watching = watchFromUrl() != null;
  const passing = passFromUrl() != null;
  if (app.links.length && (app.room !== room || app.watching !== watching || !!app.pass !== passing)) dropLinks();
  if (location.hash === "#/pass") {
    showPassNames();
    return;
  }
  if (!room) {
    showScreen("screen-home");
    tables.shown();
    return;
  }
  app.watching = watching;
  document.body.dataset.watching = watching ? "1" : "0";
  document.body.dataset.pass = passing ? "1" : "0";
  if (app.links.length) return;
  const seats = passing ? pass.loadSeats(room) : null;
  if (passing && !seats) { // a table passed around on another phone
    toast(t("pass.not_here"));
    location.hash = "";
    return;
  }
  const token = watching || passing ? null : localStorage.getItem(tokenKey(room));
  if (!token && !watching && !passing) {
    showJoin(room);
    return;
  }
  Object.assign(app, { room, drafts: {}, composerChannel: null });
  if (passing) {
    app.pass = { calling: null, holder: null, fresh: freshPass === room };
    app.links = seats.map((s) => seatLink(room, s.token, () => {
      dropLinks();
      pass.forgetSeats(room);
      toast(t("error.not_authenticated"));
      location.hash = "";
    }, s.seen));
  } else {
    app.links = [seatLink(room, token, watching ? (reason) => {
      dropLinks();
      showScreen("screen-join");
      offerJoin(false);
      $("#join-title").textContent = t("watch.title");
      $("#join-seated").textContent = t(reason === "spectators_forbidden" ? "watch.forbidden" : "error.not_found");
    } : () => {
      localStorage.removeItem(tokenKey(room));
      dropLinks();
      toast(t("error.not_authenticated"));
      showJoin(room);
    })];
  }
  app.here = app.links[0];
  for (const link of app.links) link.conn.start();
}

// Shows or hides the join form's fields (its title and text stay).
function offerJoin(yes) {
  for (const node of $("#form-join").querySelectorAll("label, button")) node.hidden = !yes;
}

async function showJoin(room) {
  showScreen("screen-join");
  $("#join-title").textContent = t("join.title", { room });
  $("#join-seated").textContent = "";
  offerJoin(false); // until the lobby says seats are still free
  try {
    const lobby = await api("GET", `/api/rooms/${room}`);
    if (lobby.status !== "lobby") {
      $("#join-seated").textContent = t(lobby.status === "running" ? "error.room_started" : "error.room_closed");
      return;
    }
    const names = lobby.players.map((p) => p.name).join(", ");
    if (names) $("#join-seated").textContent = t("join.seated", { names });
    offerJoin(true);
  } catch (err) {
    $("#join-seated").textContent = errorText(err);
  }
}

function bindForms() {
  $("#form-create").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      seated(await api("POST", "/api/rooms", { name: e.target.name.value.trim(), ...tables.createOptions() }));
    } catch (err) {
      toast(errorText(err));
    }
  });
  $("#form-join-code").addEventListener("submit", async (e) => {
    e.preventDefault();
    const room = e.target.room.value.trim().toUpperCase();
    try {
      seated(await api("POST", `/api/rooms/${room}/join`, { name: e.target.name.value.trim() }));
    } catch (err) {
      toast(errorText(err));
    }
  });
  $("#form-join").addEventListener("submit", async (e) => {
    e.preventDefault();
    const room = roomFromUrl();
    try {
      seated(await api("POST", `/api/rooms/${room}/join`, { name: e.target.name.value.trim() }));
    } catch (err) {
      toast(errorText(err));
    }
  });
  $("#copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("#share-link").value);
      toast(t("lobby.copied"));
    } catch {
      $("#share-link").select();
    }
  });
  $("#start").addEventListener("click", () => send({ type: "start" }));
  $("#leave").addEventListener("click", () => {
    const link = app.here;
    // The room's "removed" event or the socket's close may come first: both go home too.
    send({ type: "leave" }, { explain: (err) => (err.code === "disconnected" ? "" : null) })
      .then(() => goneFromTable(link, "left"), () => {});
  });
  bindPassForms();
  $("#card-hide").addEventListener("click", () => {
    app.cardHidden = !app.cardHidden;
    localStorage.setItem(HIDE_CARD_KEY, app.cardHidden ? "1" : "0");
    render();
  });
  $("#help-open").addEventListener("click", () => openHelp(null));
  $("#sound").addEventListener("click", () => {
    app.turn.toggleSound();
    showSound();
  });
  $("#dawn-close").addEventListener("click", () => app.dawn.close());
  $("#card-help").addEventListener("click", () => openHelp(app.here?.view?.me?.role));
  $("#again").addEventListener("click", async (e) => {
    e.target.disabled = true;
    try {
      const answer = await api("POST", `/api/rooms/${app.room}/again`, { token: app.links[0].token });
      follow(answer.room);
    } catch (err) {
      toast(errorText(err));
      e.target.disabled = false;
    }
  });
  $("#chat-goto").addEventListener("click", () => {
    app.chatTab = app.composerChannel;
    app.chatPinned = false;
    render();
    $("#chat-input").focus();
  });
  $("#chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("#chat-input");
    const text = input.value.trim();
    const channel = app.composerChannel;
    if (!text || !channel) return;
    const writtenIn = phaseKey(app.here.view);
    // The line names the channel the composer showed: the server refuses it if the phase has moved
    // it to another one meanwhile, and a line still waiting for a welcome dies with its phase.
    send({ type: "chat", text, channel }, {
      expired: (welcome) => phaseKey(welcome.view) !== writtenIn,
      explain: (err) => (err.code === "expired" ? t("chat.expired", { text })
        : err.code === "not_your_turn" ? t("chat.moved_on") : null),
    }).then(() => {
      // The composer may have moved to another channel since: clear the line where it now is.
      if (app.composerChannel === channel && input.value.trim() === text) input.value = "";
      else if (app.drafts[channel]?.trim() === text) delete app.drafts[channel];
    }, () => {});
  });
  $("#lang").addEventListener("change", async (e) => {
    await setLanguage(e.target.value, { persist: true });
    app.qrFor = null;
    tables.relabel();
    if (app.connStatus) showConnStatus(app.connStatus);
    if (!$("#screen-join").hidden) showJoin(roomFromUrl());
    if (!$("#screen-pass").hidden) labelPassNames();
    render();
  });
}

// `expired` is passed to the connection; `explain(err)` may word a refusal for its context ("": say
// nothing, null: the error's own words).
// `link`: the seat that sends it (on a phone passed around, a voter of the table's screen).
function send(frame, { expired, explain } = {}, link = app.here) {
  if (!link?.conn) return Promise.reject({ code: "disconnected" });
  return link.conn.send(frame, { expired }).catch((err) => {
    const text = explain?.(err) ?? errorText(err);
    if (text) toast(text);
    throw err;
  });
}

// One phase, told apart from a later phase of the same name (a second hunter's shot in a day).
function phaseKey(view) {
  return `${view.phase}@${view.deadline}`;
}

// ---------- help ----------

// One section per card, from the catalogue (the basic cards and those in play); opened at
// `role`'s when given.
function openHelp(role) {
  rebuild($("#help-roles"), helpRoles().map((r) => el("section", { id: `help-${r}`, "data-role": r, class: "helprole" },
    rolePicture(r, { className: "help-art" }),
    el("div", {}, el("h3", { text: roleName(r) }), el("p", { text: t(`explain.${r}`) })))));
  renderSetupTable();
  $("#help").showModal();
  if (role) $(`#help-${role}`)?.scrollIntoView({ block: "start" });
}

// Seed 004's recommended table, one row per size: the server's `by_size`, made by the code
// that deals (rules.presets.recommended_setup), never a copy of it.
function renderSetupTable() {
  const preset = (app.declared?.presets || []).find((p) => p.by_size);
  if (!preset) return;
  const sizes = Object.keys(preset.by_size).map(Number).sort((a, b) => a - b);
  const cards = [...new Set(sizes.flatMap((n) => Object.keys(preset.by_size[n])))];
  rebuild($("#help-004-table"), [
    el("tr", {}, el("th", { text: t("help.004.players") }), ...cards.map((c) => el("th", { text: roleName(c) }))),
    ...sizes.map((n) => el("tr", { "data-size": n }, el("td", { text: String(n) }),
      ...cards.map((c) => el("td", { text: String(preset.by_size[n][c] || 0) }))))]);
}

// ---------- playing again at the same table ----------

// A finished room's facts name the next game once its host has opened it; every seat keeps its
// token there (the server seats each player with the same one), so the page simply moves on.
function watchForNext() {
  if (app.nextWatch) return;
  const room = app.room;
  const look = async () => {
    try {
      const facts = await api("GET", `/api/rooms/${room}`);
      if (facts.next && app.room === room) follow(facts.next);
    } catch (err) {
      // A network blip does not end the wait; a room gone past its TTL does.
      if (err.code === "not_found" && app.room === room) clearInterval(app.nextWatch);
    }
  };
  app.nextWatch = setInterval(look, NEXT_POLL_MS);
  look();
}

function follow(next) {
  toast(t("end.again_started"));
  if (app.watching) { // a spectator watches the next game too
    location.hash = `#/w/${next}`;
    return;
  }
  if (app.pass) {
    // the same seats and tokens; what each has seen counts the old room's events
    pass.saveSeats(next, pass.loadSeats(app.room).map(({ seen, ...seat }) => seat));
    location.hash = `#/p/${next}`;
    return;
  }
  localStorage.setItem(tokenKey(next), app.links[0].token);
  location.hash = `#/r/${next}`;
}

// This page's seat left the table or was removed from it: its token is void, home it goes.
function goneFromTable(link, reason) {
  if (!app.links.includes(link)) return; // already gone (the event, the ack and the close all say so)
  localStorage.removeItem(tokenKey(app.room));
  dropLinks();
  toast(mod.goneText(reason));
  history.replaceState(null, "", location.pathname);
  route();
}

// ---------- connection callbacks ----------

function onWelcome(link, frame) {
  link.seat = frame.seat; // null for a spectator; after a move (close 4004), the seat it now has
  if (!app.pass && !app.watching) mod.rememberSeat(app.room, frame.seat);
  link.view = { prompts: [], chat: {}, votes: {}, tally: {}, pointing: {}, ...frame.view };
  scheduleRender();
}

function onEvent(link, ev, fresh) {
  const v = link.view;
  if (!v) return;
  const before = v.phase;
  if (fresh) applyEvent(v, ev, link.seat);
  if (fresh && ev.kind === "removed" && !app.pass) {
    if (link === app.links[0]) mod.seatRemoved(app.room, ev);
    if (ev.seat === link.seat) { // this page's seat is gone: its socket closes with 4003
      link.goneReason = ev.reason;
      goneFromTable(link, ev.reason);
      return;
    }
    if (ev.moved === link.seat) link.seat = ev.seat; // until the welcome of the socket reopened on 4004
  }
  // The dawn tells public news (deaths, the phase): one seat's stream is the table's.
  if (fresh && link === app.links[0]) app.dawn.see(ev, before);
  if (fresh && ev.kind === "phase") app.chatPinned = false;
  // On a phone passed around, news for one seat alone waits for that seat to hold the phone
  // (also news replayed to a reloaded page, if the seat had not seen it).
  if (app.pass && link !== app.pass.holder && ev.seq > link.seen && pass.isPrivateNews(ev.kind)) link.news += 1;
  // A replayed game_over still carries the full cards and chat for the end screen.
  if (ev.kind === "game_over") v.final = { alive: ev.alive, roles: ev.roles, chat: ev.chat };
  if (ev.seq > link.feedSeq) {
    link.feedSeq = ev.seq;
    if (FEED_KINDS.has(ev.kind)) {
      link.feed.push(ev);
      if (link.feed.length > FEED_LIMIT) link.feed.shift();
    }
  }
  scheduleRender();
}

function showConnStatus(status) {
  app.connStatus = status;
  const box = $("#conn");
  box.dataset.state = status.state;
  clearInterval(showConnStatus.timer);
  const paint = () => {
    if (status.state === "offline") {
      const s = Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000));
      box.textContent = t("conn.offline", { s });
    } else {
      box.textContent = t(`conn.${status.state}`);
    }
  };
  paint();
  if (status.state === "offline") showConnStatus.timer = setInterval(paint, 500);
}

// ---------- rendering ----------

function scheduleRender() {
  if (app.renderQueued) return;
  app.renderQueued = true;
  queueMicrotask(() => {
    app.renderQueued = false;
    render();
  });
}

function render() {
  if (app.pass) {
    renderPass();
    return;
  }
  const v = app.here?.view;
  if (!v) return;
  if (v.status === "lobby") renderLobby(v);
  else if (v.status === "finished" || v.outcome) renderEnd(v);
  else renderGame(v);
  announceTurn(v);
}

// The prompts this seat has not answered yet: the tab title, a vibration and (if on) a chime.
function announceTurn(v) {
  const open = v.status === "running" ? (v.prompts || []).map(promptKey).filter((key) => !app.here.answered[key]) : [];
  app.turn.setBaseTitle(v.room ? `${t("app.title")} · ${v.room}` : t("app.title"));
  app.turn.update(open, t("turn.title"));
}

function showSound() {
  const on = app.turn.sound;
  const button = $("#sound");
  button.textContent = "♪";
  button.classList.toggle("off", !on);
  button.setAttribute("aria-pressed", on ? "true" : "false");
  button.title = t(on ? "sound.on" : "sound.off");
}

const roleName = (role) => (role ? t(`role.${role}`) : t("role.unknown"));

function nameOf(seat) {
  if (seat == null) return t("players.nobody");
  const v = app.here.view;
  const s = (v.seats || []).find((x) => x.seat === Number(seat)) || v.players.find((x) => x.seat === Number(seat));
  return s ? s.name : `#${seat}`;
}

// On a phone passed around the page holds the host's seat too.
function isHost(v) {
  return app.pass ? true : v.host === app.here.seat;
}

function renderLobby(v) {
  showScreen("screen-lobby");
  document.body.dataset.phase = "lobby";
  $("#lobby-title").textContent = t("lobby.title", { room: v.room });
  // One phone passed around: nobody to share the link with; the players and rules are for the table.
  $("#lobby-share").hidden = !!app.pass;
  const link = shareLink(v.room);
  $("#share-link").value = link;
  if (app.qrFor !== `${link}|${language()}`) {
    app.qrFor = `${link}|${language()}`;
    const qr = qrcode(0, "M");
    qr.addData(link);
    qr.make();
    $("#qr").innerHTML = qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true, title: t("lobby.qr") });
  }

  $("#watch-link").value = watchLink(v.room);
  $("#lobby-watch").hidden = !!app.pass || v.settings?.rules?.spectators === "forbidden";
  $("#lobby-spectators").textContent = t("watch.count", { n: v.spectators ?? 0 });
  $("#lobby-players-title").textContent = t("lobby.players", { n: v.players.length });
  const tools = toolsContext(v, true);
  rebuild($("#lobby-players"), v.players.map((p) =>
    el("li", { "data-seat": p.seat, class: "player", "data-away": p.away ? "1" : null },
      connDot(p.connected),
      el("span", { class: "name", text: p.name }),
      p.seat === v.host ? el("span", { class: "badge", text: t("lobby.host") }) : null,
      p.seat === app.here.seat && !app.pass ? el("span", { class: "muted", text: `(${t("lobby.you")})` }) : null,
      tools ? mod.playerTools(p, tools) : null)));
  rebuild($("#lobby-news"), app.here.feed.filter((ev) => LOBBY_NEWS.has(ev.kind)).slice(-LOBBY_NEWS_LIMIT)
    .map((ev) => el("li", { "data-kind": ev.kind, "data-seq": ev.seq, text: feedText(ev) })));
  $("#leave").hidden = app.here.seat == null || !!app.pass;

  // The server shows the deal of the smallest table the settings can start while fewer are seated.
  const rip = v.roles_in_play || {};
  const min = Object.values(rip).reduce((a, b) => a + b, 0);
  const need = v.players.length < min;
  $("#lobby-need").textContent = need
    ? t("lobby.need", { n: v.players.length, min })
    : isHost(v) ? "" : t("lobby.wait_host", { name: nameOf(v.host) });

  $("#lobby-wolves").textContent = t("lobby.wolves", { n: rip.werewolf ?? 0 });
  rebuild($("#lobby-roles"), roleChips(rip));
  const preset = v.settings?.preset;
  $("#lobby-preset").dataset.preset = preset || "";
  $("#lobby-preset").textContent = t("lobby.preset", { name: preset ? t(`preset.${preset}`) : t("lobby.preset.custom") });
  rebuild($("#lobby-rules"), shownRules(v).flatMap((r) =>
    [el("dt", { "data-key": r.id, text: t(`rule.${r.id}`) }), el("dd", { text: ruleValue(r.id, v.settings.rules[r.id]) })]));
  const durations = v.settings?.durations || {};
  rebuild($("#lobby-durations"), Object.entries(durations).flatMap(([k, s]) =>
    [el("dt", { "data-key": k, text: durationLabel(k) }), el("dd", { text: String(s) })]));

  if (app.watching) $("#lobby-need").textContent = t("watch.lobby");
  const hostForm = $("#lobby-host");
  hostForm.hidden = !isHost(v);
  if (isHost(v)) renderHostForm(v, need);
  renderLobbyTable(v, { host: isHost(v), need, watching: app.watching, local: !!app.pass });
}

// What a player entry's moderation controls need (none on a phone passed around).
function toolsContext(v, lobby) {
  if (app.pass) return null;
  return { room: app.room, v, me: app.here.seat, token: app.links[0]?.token, lobby, host: isHost(v),
    send: (frame) => send(frame), changed: () => render() };
}

function roleChips(rolesInPlay) {
  return Object.entries(rolesInPlay || {}).map(([role, n]) =>
    el("li", { class: "chip", "data-role": role, text: n > 1 ? `${roleName(role)} ×${n}` : roleName(role) }));
}

// A house rule shows when its owner is dealt (or owns no card: the pack, the mayor), and only
// where it differs from seed 000, which everyone knows.
function shownRules(v, all = false) {
  const rip = v.roles_in_play || {};
  const declared = app.declared;
  const dealable = new Set((declared?.roles || []).map((r) => r.id));
  return (declared?.rules || []).filter((r) => (rip[r.owner] || !dealable.has(r.owner))
    && (all || v.settings?.rules?.[r.id] !== r.default));
}

function ruleValue(id, value) {
  return has(`rule.${id}.${value}`) ? t(`rule.${id}.${value}`) : String(value);
}

function durationLabel(key) {
  return has(`duration.${key}`) ? t(`duration.${key}`) : key;
}

// Inputs are rebuilt only when the set of settings changes, and the server's values never
// overwrite a field being edited, nor any field while the host's own change is on its way: the
// ack can arrive before the event that carries the new settings, so the form waits for a view
// that shows what the host sent (or for an error) before it takes the server's values again.
function renderHostForm(v, need) {
  const chosen = new Set(v.settings?.roles || []);
  const roles = (app.declared?.roles || []).map((r) => r.id);
  const durations = v.settings?.durations || {};
  const rules = shownRules(v, true);
  const shape = `${roles.join()}|${rules.map((r) => r.id).join()}|${Object.keys(durations).join()}|${language()}`;
  const rolesBox = $("#host-roles");
  const rulesBox = $("#host-rules");
  const durBox = $("#host-durations");
  const presetBox = $("#host-preset");
  if (app.hostShape !== shape) {
    // A role dealt brings its rules into the form: the rebuilt form keeps what the host has
    // entered (his change may still be on its way, and the next one reads the form).
    const kept = app.hostShape && rolesBox.childElementCount ? {
      roles: new Set([...rolesBox.querySelectorAll("input:checked")].map((b) => b.value)),
      rules: Object.fromEntries([...rulesBox.querySelectorAll("select")].map((s) => [s.name, s.value])),
      durations: Object.fromEntries([...durBox.querySelectorAll("input")].map((i) => [i.name, i.value])),
      edited: new Set([...durBox.querySelectorAll("input[data-dirty]")].map((i) => i.name)),
    } : null;
    app.hostShape = shape;
    presetBox.replaceChildren(el("option", { value: "", text: t("lobby.preset.custom") }),
      ...(app.declared?.presets || []).map((p) => el("option", { value: p.id, text: t(`preset.${p.id}`) })));
    presetBox.onchange = () => presetBox.value && sendSettings({ preset: presetBox.value });
    rulesBox.replaceChildren(...rules.map((r) =>
      el("label", {},
        el("span", { text: t(`rule.${r.id}`) }),
        el("select", { name: r.id, onchange: () => sendSettings() },
          ...r.values.map((value, i) => el("option", { value: i, class: value === r.default ? "default" : null,
            text: value === r.default ? t("lobby.default", { value: ruleValue(r.id, value) }) : ruleValue(r.id, value) }))))));
    rolesBox.replaceChildren(...roles.map((role) =>
      el("label", { class: "check" },
        el("input", { type: "checkbox", name: "role", value: role, onchange: () => sendSettings() }),
        el("span", { text: `${roleName(role)}: ${t(`explain.${role}`)}` }))));
    durBox.replaceChildren(...Object.keys(durations).map((k) =>
      el("label", {},
        el("span", { text: durationLabel(k) }),
        el("input", { type: "number", name: k, min: 1, inputmode: "numeric", onchange: () => sendSettings(),
          oninput: (e) => (e.target.dataset.dirty = "1") }))));
    if (kept) {
      for (const box of rolesBox.querySelectorAll("input")) box.checked = kept.roles.has(box.value);
      for (const select of rulesBox.querySelectorAll("select")) {
        const rule = rules.find((r) => r.id === select.name);
        select.value = kept.rules[select.name] ?? String(rule.values.indexOf(v.settings.rules[select.name]));
      }
      for (const input of durBox.querySelectorAll("input")) {
        input.value = kept.durations[input.name] || durations[input.name];
        // still the host's, not yet sent: the server's value must not overwrite it below
        if (kept.edited.has(input.name)) input.dataset.dirty = "1";
      }
    }
  }
  if (app.settingsSent && showsSettings(v.settings, app.settingsSent)) app.settingsSent = null;
  if (!app.settingsPending && !app.settingsSent) {
    for (const box of rolesBox.querySelectorAll("input")) box.checked = chosen.has(box.value);
    presetBox.value = v.settings?.preset || "";
    for (const select of rulesBox.querySelectorAll("select")) {
      const rule = rules.find((r) => r.id === select.name);
      select.value = String(rule.values.indexOf(v.settings.rules[select.name]));
    }
    for (const input of durBox.querySelectorAll("input")) {
      if (document.activeElement !== input && !input.dataset.dirty) input.value = durations[input.name];
    }
  }
  renderSizePicker(v);
  $("#start").disabled = need;
}

// A preset whose roles follow the table's size (004): the host picks the size first and sees
// the deal the code makes for it; the room deals that row for the players seated.
function renderSizePicker(v) {
  const preset = (app.declared?.presets || []).find((p) => p.id === v.settings?.preset && p.by_size);
  $("#host-size-box").hidden = !preset;
  if (!preset) return;
  const box = $("#host-size");
  const sizes = Object.keys(preset.by_size);
  if (box.dataset.preset !== preset.id) {
    box.dataset.preset = preset.id;
    delete box.dataset.picked;
    box.replaceChildren(...sizes.map((n) => el("option", { value: n, text: String(n) })));
    box.onchange = () => {
      box.dataset.picked = "1";
      rebuild($("#host-size-deal"), roleChips(preset.by_size[box.value]));
    };
  }
  // The table as seated, as players arrive, until the host looks at another size.
  if (!box.dataset.picked) box.value = String(Math.min(Math.max(v.players.length, Number(sizes[0])), Number(sizes.at(-1))));
  rebuild($("#host-size-deal"), roleChips(preset.by_size[box.value]));
}

// `preset` alone picks a preset; otherwise the form's roles, rules and durations are sent.
function sendSettings(preset = null) {
  let sent = preset;
  if (!sent) {
    const roles = [...document.querySelectorAll("#host-roles input:checked")].map((b) => b.value);
    const durations = {};
    for (const input of document.querySelectorAll("#host-durations input")) {
      durations[input.name] = Number(input.value);
      delete input.dataset.dirty;
    }
    const rules = {};
    for (const select of document.querySelectorAll("#host-rules select")) {
      const rule = app.declared.rules.find((r) => r.id === select.name);
      rules[select.name] = rule.values[Number(select.value)];
    }
    // a public table keeps its preset: only its durations may change
    sent = app.here.view?.public ? { durations } : { roles, durations, rules };
  }
  app.settingsPending += 1;
  app.settingsSent = sent;
  send({ type: "settings", ...sent }).catch(() => {
    // Refused: the form shows the server's settings again, unless a newer change is on its way.
    if (app.settingsSent === sent) app.settingsSent = null;
  }).finally(() => {
    app.settingsPending -= 1;
    render();
  });
}

function showsSettings(settings, sent) {
  if (sent.preset) return settings?.preset === sent.preset;
  const roles = new Set(settings?.roles || []);
  const durations = settings?.durations || {};
  return (!sent.roles || (roles.size === sent.roles.length && sent.roles.every((r) => roles.has(r))))
    && Object.entries(sent.durations).every(([k, s]) => durations[k] === s)
    && Object.entries(sent.rules || {}).every(([k, value]) => settings?.rules?.[k] === value);
}

function connDot(connected) {
  const label = connected ? t("players.online") : t("players.offline");
  return el("span", { class: `dot ${connected ? "on" : "off"}`, role: "img", "aria-label": label, title: label });
}

function phaseLabel(v) {
  return has(`phase.${v.phase}`) ? t(`phase.${v.phase}`) : v.phase;
}

function dayLabel(phase, day) {
  return t(String(phase).startsWith("night") ? "game.night" : "game.day", { n: day });
}

function renderGame(v) {
  showScreen("screen-game");
  document.body.dataset.phase = v.phase;
  $("#phase-name").textContent = phaseLabel(v);
  $("#phase-day").textContent = dayLabel(v.phase, v.day);
  tick();
  renderWaiting(v);
  // No seat: a spectator, or the table's own screen of a phone passed around (its votes).
  const seatless = app.here.seat == null;
  $("#spectating").hidden = !app.watching;
  $("#card").hidden = seatless;
  $("#act").hidden = seatless;
  $("#pass-bar").hidden = !app.pass || seatless;
  $("#pass-table").hidden = !app.pass || !seatless;
  renderTable($("#table"), v, { me: app.here.seat, hideMine: cardHidden(), nameOf, roleName });
  if (!seatless) {
    renderCard(v);
    renderPrompts(app.here);
  } else if (app.pass) {
    renderPassTable(v);
  }
  renderPlayers(v);
  rebuild($("#game-roles"), roleChips(v.roles_in_play));
  // the rules the table plays, for every seat all game long
  rebuild($("#game-rules"), shownRules(v).flatMap((r) =>
    [el("dt", { "data-key": r.id, text: t(`rule.${r.id}`) }), el("dd", { text: ruleValue(r.id, v.settings.rules[r.id]) })]));
  // One phone passed around has no chat: the players sit at one table.
  $("#chat-card").hidden = !!app.pass;
  if (!app.pass) renderChat(v);
  renderFeed();
}

function tick() {
  const v = app.here?.view;
  const box = $("#countdown");
  let text = "";
  if (v && v.deadline && v.status === "running") {
    text = t("game.left", { s: Math.max(0, Math.ceil((v.deadline - Date.now()) / 1000)) });
  }
  // Four ticks a second: written only when it changes, so an idle page does no layout work.
  if (box.textContent !== text) box.textContent = text;
}

// From view.waiting when known, else from the phase and the public votes; never more.
function renderWaiting(v) {
  let who = null;
  if (v.phase === "day.election" || v.phase === "day.vote") {
    const votes = v.votes || {};
    who = (v.seats || []).filter((s) => s.alive && !(s.seat in votes)).map((s) => s.name).join(", ");
  } else if (v.waiting?.seats?.length) {
    who = v.waiting.seats.map(nameOf).join(", ");
  } else if (v.waiting?.action && has(`waiting.role.${v.waiting.action}`)) {
    who = t(`waiting.role.${v.waiting.action}`);
  } else if (has(`waiting.phase.${v.phase}`)) {
    who = t(`waiting.phase.${v.phase}`);
  }
  $("#waiting").textContent = who ? t("waiting.for", { who }) : "";
}

function renderCard(v) {
  const me = v.me || {};
  const card = $("#card");
  card.dataset.role = me.role || "";
  const hide = cardHidden();
  const toggle = $("#card-hide");
  toggle.hidden = !!app.pass; // the covers hide it between players
  toggle.textContent = t(hide ? "card.show" : "card.hide");
  toggle.setAttribute("aria-pressed", hide ? "true" : "false");
  $("#card-role").textContent = hide ? t("card.hidden") : roleName(me.role);
  rebuild($("#card-art"), [rolePicture(hide ? null : me.role, { className: "card-picture" })]);
  $("#card-explain").textContent = hide || !me.role ? "" : t(`explain.${me.role}`);
  $("#card-help").hidden = hide || !me.role;
  if (hide) {
    rebuild($("#card-facts"), []);
    return;
  }
  const facts = [];
  if (me.alive === false) facts.push(el("li", { class: "warn", text: t("card.dead") }));
  if (v.mayor === app.here.seat) facts.push(el("li", { text: t("card.mayor") }));
  if (v.linked) facts.push(el("li", { "data-fact": "linked", text: t("card.linked", { names: v.linked.map(nameOf).join(" ♥ ") }) }));
  if (v.lover != null) facts.push(el("li", { "data-fact": "lover", text: t("card.lover", { name: nameOf(v.lover) }) }));
  if (v.wolves) {
    const others = v.wolves.filter((s) => s !== app.here.seat);
    facts.push(el("li", { "data-fact": "wolves",
      text: others.length ? t("card.wolves", { names: others.map(nameOf).join(", ") }) : t("card.lone_wolf") }));
  }
  for (const r of v.seer_results || []) {
    facts.push(el("li", { "data-fact": "seen", text: t("card.seen", { name: nameOf(r.seat), role: roleName(r.role), n: r.night }) }));
  }
  for (const r of v.medium_results || []) {
    facts.push(el("li", { "data-fact": "medium", text: t("card.medium", { name: nameOf(r.seat), role: roleName(r.role), n: r.night }) }));
  }
  if (v.pack) facts.push(el("li", { "data-fact": "pack", text: t("card.pack", { names: v.pack.map(nameOf).join(", ") }) }));
  if (v.lover_pair) facts.push(el("li", { "data-fact": "lover_pair", text: t("card.lover", { name: nameOf(v.lover_pair.find((s) => s !== app.here.seat)) }) }));
  rebuild($("#card-facts"), facts);
}

function myCurrentChoice(link, p) {
  const v = link.view;
  if (p.action === "wolves.point") return v.pointing?.[link.seat];
  if (p.action === "vote" || p.action === "mayor.elect") return v.votes?.[link.seat];
  return undefined;
}

function act(link, p, targets, options = {}) {
  const key = promptKey(p);
  send({ type: "act", action: p.action, targets }, options, link).then(() => {
    link.answered[key] = targets;
    delete link.selected[key];
    scheduleRender();
  }, () => {});
}

function renderPrompts(link) {
  const v = link.view;
  const prompts = v.prompts || [];
  const nodes = prompts.map((p) => promptNode(link, p));
  if (!nodes.length) nodes.push(el("p", { class: "muted", text: t("act.nothing") }));
  // Offered even without a prompt, so the button is there as soon as the discussion starts.
  if (v.phase === "day.discussion" && v.requests && v.me?.alive && !prompts.some((p) => p.action === "vote.request")) {
    nodes.push(requestNode(link, askToVote(v)));
  }
  rebuild($("#prompts"), nodes);
}

const askToVote = (v) => ({ action: "vote.request", choices: [], min: 0, max: 0, deadline: v.deadline });

function actionText(action, part) {
  return has(`action.${action}.${part}`) ? t(`action.${action}.${part}`) : part === "title" ? t("action.unknown.title", { action }) : "";
}

function requestNode(link, p) {
  const r = link.view.requests || { count: 0, needed: null, mine: false };
  const vars = { count: r.count, needed: r.needed };
  // How many must ask is known once someone has asked (or from a welcome): no "?" before that.
  const counted = r.needed != null;
  const asked = r.mine || link.answered[promptKey(p)];
  return el("div", { class: "prompt", "data-action": p.action, "data-key": promptKey(p), "data-answered": asked ? "1" : null },
    el("h3", { text: actionText(p.action, "title") }),
    el("p", { class: "hint", text: actionText(p.action, "help") }),
    asked
      ? el("p", { class: "ok", text: t(counted ? "action.vote.request.asked" : "action.vote.request.asked_first", vars) })
      : el("button", { type: "button", class: "primary", "data-fk": `${link.seat}:req`, onclick: () => act(link, p, []),
        text: t(counted ? "action.vote.request.button" : "action.vote.request.button_first", vars) }));
}

function promptNode(link, p) {
  if (p.action === "vote.request") return requestNode(link, p);
  const v = link.view;
  const key = promptKey(p);
  const fk = `${link.seat}:${key}`; // one page may show several seats' prompts (a phone passed around)
  const sel = link.selected[key] || new Set();
  const current = myCurrentChoice(link, p);
  const answered = link.answered[key];
  const extra = [];
  if (p.action.startsWith("witch.") && v.witch) {
    extra.push(el("p", { class: "info", text: v.witch.victim == null ? t("witch.no_victim") : t("witch.victim", { name: nameOf(v.witch.victim) }) }));
    if (v.witch.guarded) extra.push(el("p", { class: "info", text: t("witch.guarded") }));
  }
  if (p.action === "wolves.point" && Object.keys(v.pointing || {}).length) {
    extra.push(el("ul", { class: "plain pointing", "aria-label": t("wolves.pointing") },
      Object.entries(v.pointing).map(([wolf, target]) =>
        el("li", { text: `${nameOf(wolf)} → ${nameOf(target)}` }))));
  }
  const choose = (seat) => {
    const next = new Set(sel);
    if (p.max <= 1) {
      next.clear();
      next.add(seat);
    } else if (next.has(seat)) next.delete(seat);
    else if (next.size < p.max) next.add(seat);
    link.selected[key] = next;
    render();
  };
  const buttons = p.choices.map((seat) => {
    const picked = sel.has(seat) || (!sel.size && (current === seat || answered?.includes(seat)));
    const tally = v.tally?.[seat];
    return el("button", {
      type: "button", class: "choice", "data-seat": seat, "data-fk": `${fk}:${seat}`,
      "aria-pressed": picked ? "true" : "false", onclick: () => choose(seat),
    }, el("span", { class: "name", text: nameOf(seat) }),
    tally ? el("span", { class: "count", text: t("players.votes", { n: tally }) }) : null);
  });
  const count = sel.size;
  // A prompt of no targets (the Little Girl's peek) is one button: the confirm itself.
  const ready = p.max === 0 || (count >= Math.max(1, p.min) && count <= p.max);
  const need = p.max === 0 ? "" : p.max === 1 ? t(p.min === 1 ? "act.pick_one" : "act.pick_one_or_pass")
    : t(p.min === p.max ? "act.pick" : "act.pick_upto", { n: p.max });
  return el("div", { class: "prompt", "data-action": p.action, "data-key": key, "data-min": p.min, "data-max": p.max,
    "data-answered": answered ? "1" : null },
    el("h3", { text: actionText(p.action, "title") }),
    el("p", { class: "hint", text: `${actionText(p.action, "help")} ${need}` }),
    extra,
    el("div", { class: "choices", role: "group", "aria-label": actionText(p.action, "title") }, buttons),
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary confirm", "data-fk": `${fk}:ok`, disabled: !ready,
        onclick: () => act(link, p, [...sel]), text: p.max === 0 && has(`action.${p.action}.button`) ? t(`action.${p.action}.button`) : t("act.confirm") }),
      p.min === 0 && p.max > 0 ? el("button", { type: "button", class: "pass", "data-fk": `${fk}:pass`,
        onclick: () => act(link, p, []), text: t("act.pass") }) : null),
    answered ? el("p", { class: "ok", text: t("act.sent") }) : null);
}

function renderPlayers(v) {
  const online = new Map(v.players.map((p) => [p.seat, p.connected]));
  const away = new Map(v.players.map((p) => [p.seat, !!p.away]));
  const tools = toolsContext(v, false);
  rebuild($("#players"), (v.seats || []).map((s) => {
    const voted = v.votes?.[s.seat];
    const points = v.pointing?.[s.seat];
    const tally = v.tally?.[s.seat];
    return el("li", {
      class: `player ${s.alive ? "alive" : "dead"} ${s.seat === app.here.seat ? "me" : ""}`,
      "data-seat": s.seat, "data-alive": s.alive ? "1" : "0", "data-role": s.role || null,
    },
      connDot(online.get(s.seat)),
      el("span", { class: "name", text: s.name }),
      s.seat === app.here.seat ? el("span", { class: "muted", text: `(${t("players.you")})` }) : null,
      s.mayor || v.mayor === s.seat ? el("span", { class: "badge mayor", text: t("players.mayor") }) : null,
      el("span", { class: "state", text: s.alive ? t("players.alive") : t("players.dead") }),
      s.role && !(cardHidden() && s.seat === app.here.seat) ? el("span", { class: "chip role", text: roleName(s.role) }) : null,
      tally ? el("span", { class: "tally", text: t("players.votes", { n: tally }) }) : null,
      voted !== undefined ? el("span", { class: "muted vote", text: t("players.voted_for", { name: nameOf(voted) }) }) : null,
      points !== undefined ? el("span", { class: "muted point", text: t("players.points_at", { name: nameOf(points) }) }) : null,
      tools ? mod.playerTools({ seat: s.seat, name: s.name, away: away.get(s.seat) }, tools) : null);
  }));
}

function channelLabel(ch) {
  return has(`chat.channel.${ch}`) ? t(`chat.channel.${ch}`) : ch;
}

function chatLine(line) {
  // a line without a seat is one the Little Girl overheard: its writer is a letter, never a name
  const who = line.seat == null ? t("chat.spied", { letter: line.name }) : line.name;
  return el("li", { class: "line", "data-channel": line.channel },
    el("span", { class: "who", text: `${who}: ` }), el("bdi", { text: line.text }));
}

function renderChat(v) {
  const chat = v.chat || {};
  const channels = v.channels || [];
  const writable = channels[0] ?? null;
  const tabs = [...new Set([...channels, ...Object.keys(chat)])];
  // Show where the seat writes now (night falls, day breaks, the seat dies) unless the reader
  // picked a tab; a seat with nowhere to write follows the newest line.
  const newest = Object.values(chat).flat().reduce((a, b) => (b.ts >= (a?.ts ?? -Infinity) ? b : a), null);
  if (!app.chatPinned) app.chatTab = writable ?? newest?.channel ?? app.chatTab;
  if (!tabs.includes(app.chatTab)) app.chatTab = tabs[0] ?? null;
  rebuild($("#chat-tabs"), tabs.map((ch) => el("button", {
    type: "button", class: "tab", "data-channel": ch, "data-fk": `tab:${ch}`,
    "aria-pressed": ch === app.chatTab ? "true" : "false",
    onclick: () => { app.chatTab = ch; app.chatPinned = true; render(); },
  }, channelLabel(ch), el("span", { class: "count", text: ` ${mod.visibleLines(app.room, chat[ch] || []).shown.length}` }))));
  // a muted player's lines stay in the view (and the review): this page does not show them
  const { shown: lines, hidden } = mod.visibleLines(app.room, chat[app.chatTab] || []);
  const log = $("#chat-log");
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  rebuild(log, [...(lines.length || hidden ? lines.map(chatLine) : [el("li", { class: "muted", text: t("chat.empty") })]),
    mod.hiddenNote(hidden)].filter(Boolean));
  if (atBottom) log.scrollTop = log.scrollHeight;
  renderComposer(writable);
}

// The composer is there only where the seat may write, names that channel, and shows under that
// channel's own lines: a reader of another tab gets a button back to it instead.
function renderComposer(channel) {
  const input = $("#chat-input");
  if (app.composerChannel !== channel) {
    // A draft belongs to the channel it was typed for: set aside, never carried into another one.
    const was = app.composerChannel;
    if (was && input.value.trim()) {
      app.drafts[was] = input.value;
      toast(t("chat.draft_aside", { channel: channelLabel(was) }));
    }
    input.value = app.drafts[channel] ?? "";
    delete app.drafts[channel];
    app.composerChannel = channel;
  }
  const elsewhere = channel != null && app.chatTab !== channel;
  const form = $("#chat-form");
  form.hidden = channel == null || elsewhere;
  form.dataset.channel = channel ?? "";
  $("#chat-to").textContent = channel ? t("chat.write_to", { channel: channelLabel(channel) }) : "";
  const goto = $("#chat-goto");
  goto.hidden = !elsewhere;
  goto.textContent = elsewhere ? t("chat.goto", { channel: channelLabel(channel) }) : "";
  $("#chat-readonly").hidden = channel != null;
}

function feedText(ev, next) {
  switch (ev.kind) {
    case "joined": return t("feed.joined", { name: ev.name });
    case "game_started": return t("feed.started");
    case "phase": return t("feed.phase", { phase: has(`phase.${ev.phase}`) ? t(`phase.${ev.phase}`) : ev.phase, day: dayLabel(ev.phase, ev.day) });
    case "death": {
      const cause = has(`cause.${ev.cause}`) ? t(`cause.${ev.cause}`) : t("cause.unknown", { cause: ev.cause });
      // seed 004 may keep the card hidden until the end (role null)
      return ev.role == null ? t("feed.death.hidden", { name: nameOf(ev.seat), cause })
        : t("feed.death", { name: nameOf(ev.seat), cause, role: roleName(ev.role) });
    }
    case "mayor": return ev.seat == null ? t("feed.mayor.none") : t(ev.how === "successor" ? "feed.mayor.successor" : "feed.mayor.elected", { name: nameOf(ev.seat) });
    case "vote_result": {
      if (ev.phase === "day.election" || ev.phase === "day.runoff") {
        return ev.target == null && ev.tie?.length > 1
          ? t("feed.vote_result.tie", { names: ev.tie.map(nameOf).join(", ") })
          : t("feed.election_result", { name: nameOf(ev.target) });
      }
      if (ev.phase === "day.tiebreak") {
        return ev.target == null ? t("feed.tiebreak.none") : t("feed.tiebreak", { name: nameOf(ev.target) });
      }
      const result = ev.target == null ? t("feed.vote_result.none") : t("feed.vote_result", { name: nameOf(ev.target) });
      if (ev.tie?.length > 1) {
        // What a tie leads to is told by its own result (a lot, the scapegoat) or by the event
        // after it: the mayor's tie-break, a revote, or the night.
        const names = ev.tie.map(nameOf).join(", ");
        if (ev.target != null) return `${t("feed.vote_result.tie", { names })} ${result}`;
        if (!next || (next.kind === "phase" && next.phase === "day.revote")) return t("feed.tie", { names });
        return t(next.kind === "phase" && next.phase === "day.tiebreak" ? "feed.tie.mayor" : "feed.tie.nobody", { names });
      }
      return result;
    }
    case "seer_result": return t("feed.seer", { name: nameOf(ev.seat), role: roleName(ev.role) });
    case "lovers": return ev.lovers.includes(app.here.seat)
      ? t("feed.lovers", { name: nameOf(ev.lovers.find((s) => s !== app.here.seat) ?? app.here.seat) })
      : t("card.linked", { names: ev.lovers.map(nameOf).join(" ♥ ") });
    case "candidate": return t("feed.candidate", { name: nameOf(ev.seat) });
    case "idiot_revealed": return t("feed.idiot_revealed", { name: nameOf(ev.seat) });
    case "powers_lost": return t("feed.powers_lost", { name: nameOf(ev.seat) });
    case "scapegoat_voters": return t("feed.scapegoat_voters", { names: ev.voters.map(nameOf).join(", ") });
    case "talkative_seer": return ev.role == null ? t("feed.talkative_seer.none") : t("feed.talkative_seer", { role: roleName(ev.role) });
    case "peeked": return t("feed.peeked", { pointing: Object.entries(ev.pointing).map(([letter, target]) =>
      t("feed.peeked.wolf", { letter, name: target == null ? "—" : nameOf(target) })).join(", ") });
    case "little_girl_caught": return t("feed.little_girl_caught", { name: nameOf(ev.seat) });
    case "charmed": return t("feed.charmed", { names: ev.charmed.map(nameOf).join(", ") });
    case "medium_result": return t("feed.medium", { name: nameOf(ev.seat), role: roleName(ev.role) });
    case "traitor_pack": return t("feed.traitor_pack", { names: ev.wolves.map(nameOf).join(", ") });
    case "lover_pair": return t("feed.lover_pair", { name: nameOf(ev.lovers.find((s) => s !== app.here.seat)) });
    case "bread": return t("feed.bread");
    case "infected": return t("feed.infected", { names: ev.wolves.map(nameOf).join(", ") });
    case "thief_cards": return t("feed.thief_cards", { first: roleName(ev.cards[0]), second: roleName(ev.cards[1]) });
    case "game_over": return t("feed.game_over");
    case "removed": return mod.removedFeedText(ev);
    default: return null;
  }
}

function renderFeed() {
  const feed = app.here.feed;
  rebuild($("#feed"), feed.map((ev, i) =>
    el("li", { "data-kind": ev.kind, "data-seq": ev.seq, text: feedText(ev, feed[i + 1]) })).reverse());
}

function renderEnd(v) {
  showScreen("screen-end");
  document.body.dataset.phase = "over";
  $("#again").hidden = !isHost(v);
  $("#again-wait").hidden = isHost(v) || app.watching;
  $("#review-link").href = `review.html#${v.room}`;
  watchForNext();
  const final = v.final || {};
  const winners = v.outcome?.winners || [];
  $("#end-me").textContent = app.here.seat == null ? "" : winners.includes(app.here.seat) ? t("end.you_won") : t("end.you_lost");
  rebuild($("#end-banner"), [rolePicture(BANNER[v.outcome?.reason] ?? null, { className: "banner-art" })]);
  $("#end-winners").textContent = winners.length ? t("end.winners", { names: winners.map(nameOf).join(", ") }) : t("end.no_winner");
  const reason = v.outcome?.reason;
  $("#end-reason").textContent = reason && has(`end.reason.${reason}`) ? t(`end.reason.${reason}`) : reason || "";
  const roles = final.roles || {};
  const alive = new Set(final.alive || (v.seats || []).filter((s) => s.alive).map((s) => s.seat));
  rebuild($("#end-cards"), (v.seats || []).map((s) => {
    const role = roles[s.seat] ?? s.role;
    return el("li", { class: `player ${alive.has(s.seat) ? "alive" : "dead"}`, "data-seat": s.seat, "data-role": role },
      el("span", { class: "name", text: s.name }),
      el("span", { class: "chip role", text: roleName(role) }),
      el("span", { class: "state", text: alive.has(s.seat) ? t("players.alive") : t("players.dead") }),
      winners.includes(s.seat) ? el("span", { class: "badge", role: "img", "aria-label": t("end.winner"), title: t("end.winner"), text: "★" }) : null);
  }));
  const lines = final.chat || Object.values(v.chat || {}).flat();
  const byChannel = new Map();
  for (const line of lines) {
    if (!byChannel.has(line.channel)) byChannel.set(line.channel, []);
    byChannel.get(line.channel).push(line);
  }
  rebuild($("#end-chat"), [...byChannel].map(([ch, ls]) => {
    const { shown, hidden } = mod.visibleLines(app.room, ls);
    return el("section", { class: "endchat", "data-channel": ch },
      el("h3", { text: channelLabel(ch) }),
      el("ol", { class: "plain chatlog" }, shown.map(chatLine), mod.hiddenNote(hidden)));
  }));
}

// ---------- one phone passed around ----------

const FIRST_NAMES = 6; // rows the names form opens with
let freshPass = null; // the room this page has just seated: it gets seed 004's preset once

function cardHidden() {
  return app.cardHidden && !app.pass; // the covers hide a passed phone's cards
}

// Whose screen shows: the lobby (the table's rules) until the start; then the player holding the
// phone, or else the cover naming who takes it next, or else the table's own screen (the day's
// votes); the end for all. A reload starts from a cover or the table's screen, never a seat's.
function renderPass() {
  const links = app.links;
  if (!links.every((l) => l.view)) return;
  const v = links[0].view;
  const p = app.pass;
  if (v.status === "lobby") {
    app.here = links[0];
    renderLobby(v);
    if (p.fresh) {
      p.fresh = false;
      if (v.settings?.preset !== "seed_004") sendSettings({ preset: "seed_004" });
    }
    return;
  }
  if (v.status === "finished" || v.outcome) {
    if (p.holder || p.calling) clearGame();
    p.holder = p.calling = null;
    app.here = tableLink(links);
    renderEnd(app.here.view);
    return;
  }
  if (p.holder) {
    app.here = p.holder;
    renderGame(p.holder.view);
    $("#pass-who").textContent = t("pass.holder", { name: nameOf(p.holder.seat) });
    return;
  }
  if (p.calling && !pass.needsCall(p.calling)) p.calling = null;
  p.calling ??= pass.nextCall(links);
  if (p.calling) {
    showCover(p.calling);
    return;
  }
  app.here = tableLink(links);
  renderGame(app.here.view);
}

// The table's own screen: no seat, what every seat knows alike.
function tableLink(links) {
  return { seat: null, view: pass.publicView(links), feed: pass.publicFeed(links), selected: {}, answered: {} };
}

// Between two players: nothing of the last screen stays in the page, shown or hidden.
function clearGame() {
  for (const sel of ["#card-art", "#card-facts", "#prompts", "#table", "#players", "#feed", "#chat-log",
    "#chat-tabs", "#pass-prompts", "#game-roles", "#game-rules", "#dawn-dead"]) $(sel).replaceChildren();
  for (const sel of ["#card-role", "#card-explain", "#waiting", "#pass-who"]) $(sel).textContent = "";
  $("#card").dataset.role = "";
  $("#toast").hidden = true;
  if ($("#help").open) $("#help").close();
  app.dawn.close();
}

function showCover(link) {
  app.here = tableLink(app.links); // what names and the dawn may read meanwhile: the public table
  clearGame();
  showScreen("screen-cover");
  document.body.dataset.phase = app.links[0].view.phase;
  const name = nameOf(link.seat);
  $("#cover-title").textContent = t("pass.cover.title", { name });
  $("#cover-hint").textContent = t(pass.isNight(link.view.phase) ? "pass.cover.night" : "pass.cover.day", { name });
  const show = $("#cover-show");
  show.textContent = t("pass.cover.show", { name });
  show.dataset.seat = link.seat;
}

// By day, every seat's public prompt (the vote, a shot...) under its name, and one button for the
// table to ask for the vote; at night, nothing: the phone calls each player in turn.
function renderPassTable(v) {
  const night = pass.isNight(v.phase);
  $("#pass-table-hint").textContent = t(night ? "pass.table.night" : "pass.table.day");
  const nodes = [];
  if (!night) {
    // Read when clicked: a button that renders the same is kept with its first handler.
    const asking = () => app.links.filter((l) => l.view.phase === "day.discussion" && l.view.requests && l.view.me?.alive
      && !l.view.requests.mine && !(promptKey(askToVote(l.view)) in l.answered));
    if (asking().length) {
      nodes.push(el("button", { type: "button", id: "pass-vote-now", class: "primary", "data-fk": "vote-now",
        // Once a majority has asked the vote begins: the requests after it are refused, and that is all.
        onclick: () => asking().forEach((l) => act(l, askToVote(l.view), [], { explain: (err) => (err.code === "not_your_turn" ? "" : null) })),
        text: t("pass.vote_now") }));
    }
    for (const l of app.links) {
      for (const p of l.view.prompts || []) {
        if (p.action === "vote.request") continue;
        nodes.push(el("div", { class: "pass-seat", "data-seat": l.seat },
          el("h3", { text: nameOf(l.seat) }), promptNode(l, p)));
      }
    }
  }
  rebuild($("#pass-prompts"), nodes);
}

function showPassNames() {
  showScreen("screen-pass");
  const list = $("#pass-names");
  while (list.childElementCount < FIRST_NAMES) addPassName();
  labelPassNames();
}

function addPassName() {
  $("#pass-names").append(el("li", { class: "passname" },
    el("input", { name: "player", maxlength: 24, required: true, autocomplete: "off" }),
    el("button", { type: "button", class: "remove", onclick: (e) => {
      e.currentTarget.closest("li").remove();
      labelPassNames();
    } })));
}

function labelPassNames() {
  const rows = [...$("#pass-names").children];
  rows.forEach((li, i) => {
    const input = li.querySelector("input");
    input.placeholder = t("pass.player", { n: i + 1 });
    input.setAttribute("aria-label", t("pass.player", { n: i + 1 }));
    const remove = li.querySelector("button");
    remove.textContent = t("pass.remove");
    remove.disabled = rows.length <= pass.MIN_NAMES;
  });
  $("#pass-add").disabled = rows.length >= pass.MAX_PLAYERS;
  $("#pass-count").textContent = t("pass.count", { n: rows.length, max: pass.MAX_PLAYERS });
}

function bindPassForms() {
  $("#pass-open").addEventListener("click", () => (location.hash = "#/pass"));
  $("#pass-add").addEventListener("click", () => {
    addPassName();
    labelPassNames();
    $("#pass-names li:last-child input").focus();
  });
  $("#form-pass").addEventListener("submit", async (e) => {
    e.preventDefault();
    const names = [...$("#pass-names").querySelectorAll("input")].map((input) => input.value.trim());
    const folded = names.map((n) => n.toLocaleLowerCase());
    const twice = names.find((n, i) => folded.indexOf(folded[i]) !== i);
    if (twice) {
      toast(t("pass.twice", { name: twice }));
      return;
    }
    const button = e.submitter;
    button.disabled = true;
    let name = names[0];
    try {
      // One room, its seats joined one at a time so that they follow the order around the table.
      const host = await api("POST", "/api/rooms", { name });
      const seats = [{ seat: host.seat, name, token: host.token }];
      for (name of names.slice(1)) {
        const seat = await api("POST", `/api/rooms/${host.room}/join`, { name });
        seats.push({ seat: seat.seat, name, token: seat.token });
      }
      pass.saveSeats(host.room, seats);
      freshPass = host.room;
      location.hash = `#/p/${host.room}`;
    } catch (err) {
      toast(t("pass.refused", { name, why: errorText(err) }));
    } finally {
      button.disabled = false;
    }
  });
  $("#cover-show").addEventListener("click", () => {
    const p = app.pass;
    if (!p?.calling) return;
    p.holder = p.calling;
    p.calling = null;
    p.holder.news = 0;
    render();
    window.scrollTo(0, 0);
  });
  $("#pass-done").addEventListener("click", () => {
    const p = app.pass;
    if (!p?.holder) return;
    pass.putDown(app.room, p.holder);
    p.holder = null;
    clearGame();
    render();
    window.scrollTo(0, 0);
  });
}

// ---------- boot ----------

async function loadDeclaration() {
  for (let pause = 500; ; pause = Math.min(pause * 2, 8000)) {
    try {
      const r = await fetch("/api/rules");
      if (r.ok) return await r.json();
    } catch { /* offline for a moment: try again */ }
    await new Promise((done) => setTimeout(done, pause));
  }
}

async function boot() {
  // The declaration (roles, house rules, presets): the host's form, the rules shown, the help.
  // Fetched once, before any room is shown; welcomes do not carry it (9.6 KB each).
  const declaration = loadDeclaration();
  const lang = pickLanguage();
  await setLanguage(lang);
  app.declared = await declaration;
  const select = $("#lang");
  select.replaceChildren(...LANGS.map((l) => el("option", { value: l, text: t(`lang.${l}`) })));
  select.value = lang;
  app.turn = new TurnNotifier(t("app.title"));
  app.dawn = new Dawn({ nameOf, roleName });
  showSound();
  tables.initHome({ seated, presets: (app.declared.presets || []).map((p) => p.id) });
  initLobbyTable({ send: (frame, options) => send(frame, options) });
  bindForms();
  window.addEventListener("hashchange", route);
  setInterval(tick, 250);
  route();
}

boot();
