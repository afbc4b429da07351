// The browser client: renders the seat's view and answers the prompts it receives.
// It holds no rules: what to show comes from the view and the events, what to do from the prompts.
// This module routes (#/r/, #/w/, #/p/, #/pass), keeps the seats' sockets and views, and renders
// the screen the view calls for (js/screens/*.js).
import { LANGS, isolate, pickLanguage, setLanguage, t } from "./i18n.js";
import { Connection } from "./conn.js";
import { applyEvent, promptKey } from "./state.js";
import { el } from "./dom.js";
import { TurnNotifier } from "./notify.js";
import { Sound } from "./sound.js";
import { Narrator } from "./narrator.js";
import * as motion from "./motion.js";
import { Dawn } from "./dawn.js";
import * as pass from "./pass.js";
import { api, errorText, loadDeclaration } from "./http.js";
import { declare, inFeed } from "./eventlines.js";
import { declareFacts } from "./facts.js";
import { toast } from "./toast.js";
import * as tables from "./tables.js";
import { initLobbyTable } from "./lobbytable.js";
import * as mod from "./moderation.js";
import { $, app, setRender, render, scheduleRender, send, showScreen, nameOf, roleName, tokenKey,
  recallAnswered, feedText } from "./app.js";
import * as lobbyScreen from "./screens/lobby.js";
import * as tableScreen from "./screens/table.js";
import * as endScreen from "./screens/end.js";
import * as chatScreen from "./screens/chat.js";
import * as passScreen from "./screens/pass.js";

const FEED_LIMIT = 80;
const LEFT_KEY = "ww:left"; // the running game this page's player left (a bot plays the seat)

// A watch link: #/w/CODE (a spectator's page).
function watchFromUrl() {
  const m = location.hash.match(/^#\/w\/([A-Za-z0-9]+)/);
  return m ? m[1].toUpperCase() : null;
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
    passScreen.showPassNames();
    return;
  }
  if (!room) {
    showScreen("screen-home");
    $("#home-back").hidden = !localStorage.getItem(LEFT_KEY);
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
    app.pass = pass.newPhone(passScreen.freshPass === room, seats.map((s) => s.seat));
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
      $("#join-watch").hidden = true;
      $("#join-title").textContent = t("watch.title");
      $("#join-seated").textContent = t(reason === "spectators_forbidden" ? "watch.forbidden"
        : reason === "rate_limited" ? "error.rate_limited" : "error.not_found");
    } : (reason) => {
      // bad_origin: this page is not the one the gateway expects (WW_ALLOWED_ORIGINS), the token
      // may well be good.
      if (reason !== "bad_origin") localStorage.removeItem(tokenKey(room));
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
  $("#join-watch").hidden = true;
  offerJoin(false); // until the lobby says seats are still free
  // A gateway that could not answer (the network, a 5xx: a busy or restarting server) is asked
  // again while this screen shows; a refusal (no such room, rate limited) is final.
  for (let pause = 500; ; pause = Math.min(pause * 2, 8000)) {
    try {
      const lobby = await api("GET", `/api/rooms/${room}`);
      if (lobby.status !== "lobby") {
        $("#join-seated").textContent = t(lobby.status === "running" ? "error.room_started" : "error.room_closed");
        // a game under way may still be watched (its page says so if this table allows none)
        if (lobby.status === "running") {
          $("#join-watch-link").href = `#/w/${room}`;
          $("#join-watch").hidden = false;
        }
        return;
      }
      const names = lobby.players.map((p) => isolate(p.name)).join(", ");
      if (names) $("#join-seated").textContent = t("join.seated", { names });
      offerJoin(true);
      return;
    } catch (err) {
      $("#join-seated").textContent = errorText(err);
      if (!(err.code === "network" || err.status >= 500)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    if (document.body.dataset.screen !== "screen-join" || roomFromUrl() !== room) return;
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
  $("#leave").addEventListener("click", () => {
    const link = app.here;
    // The room's "removed" event or the socket's close may come first: both go home too.
    send({ type: "leave" }, { explain: (err) => (err.code === "disconnected" ? "" : null) })
      .then(() => goneFromTable(link, "left"), () => {});
  });
  // In a running game: a bot plays the seat from then on; the token stays, so this table's link
  // brings the player back to the seat.
  $("#game-leave").addEventListener("click", () => $("#leave-game").showModal());
  $("#home-back-button").addEventListener("click", () => {
    location.hash = `#/r/${localStorage.getItem(LEFT_KEY)}`;
  });
  $("#leave-game-no").addEventListener("click", () => $("#leave-game").close());
  $("#leave-game-yes").addEventListener("click", () => {
    $("#leave-game").close();
    const link = app.here;
    send({ type: "leave" }).then(() => leftGame(link), () => {});
  });
  $("#sound").addEventListener("click", () => {
    app.sound.toggle();
    showSound();
  });
  $("#narrator").addEventListener("click", () => {
    app.narrator.toggle();
    showNarrator();
  });
  $("#ambience").addEventListener("click", () => {
    app.sound.unlock(); // a gesture: the ambience may start now, before any other tap made audio
    app.narrator.toggleAmbience();
    showNarrator();
  });
  lobbyScreen.bind();
  tableScreen.bind();
  endScreen.bind();
  chatScreen.bind();
  passScreen.bind(() => {
    dropLinks();
    route();
  });
  $("#lang").addEventListener("change", async (e) => {
    await setLanguage(e.target.value, { persist: true });
    app.qrFor = null;
    tables.relabel();
    if (app.connStatus) showConnStatus(app.connStatus);
    if (!$("#screen-join").hidden) showJoin(roomFromUrl());
    if (!$("#screen-pass").hidden) passScreen.labelPassNames();
    render();
  });
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

// This page's seat left a running game: a bot plays it, the page goes home keeping the token
// (and the room, for the home page's way back to it).
function leftGame(link) {
  if (!app.links.includes(link)) return;
  localStorage.setItem(LEFT_KEY, app.room);
  dropLinks();
  toast(t("mod.you_left_game"));
  history.replaceState(null, "", location.pathname);
  route();
}

function onWelcome(link, frame) {
  if (localStorage.getItem(LEFT_KEY) === app.room && frame.seat != null) localStorage.removeItem(LEFT_KEY);
  link.seat = frame.seat; // null for a spectator; after a move (close 4004), the seat it now has
  if (!app.pass && !app.watching) mod.rememberSeat(app.room, frame.seat);
  const view = { prompts: [], chat: {}, votes: {}, tally: {}, pointing: {}, ...frame.view };
  keepEarlierChat(link.view, view);
  link.view = view;
  recallAnswered(link);
  scheduleRender();
}

// A welcome carries the last lines of each chat channel (protocol.md, "Welcome and view"):
// `chat_omitted[ch]` lines came before them. The lines this page already had of those stay.
function keepEarlierChat(before, view) {
  const omitted = view.chat_omitted || {};
  if (!before || before.status !== view.status) return; // a game over lists its lines anew
  view.chat_omitted = { ...omitted };
  for (const [ch, n] of Object.entries(omitted)) {
    const had = (before.chat || {})[ch] || [];
    const from = (before.chat_omitted || {})[ch] || 0; // the first line `had` holds
    if (from < n && from + had.length >= n) {
      view.chat[ch] = [...had.slice(0, n - from), ...(view.chat[ch] || [])];
      view.chat_omitted[ch] = from;
    }
  }
}

function onEvent(link, ev, fresh) {
  const v = link.view;
  if (!v) return;
  const before = v.phase;
  if (fresh) applyEvent(v, ev, link.seat);
  if (fresh && ev.kind === "removed" && !app.pass) {
    if (ev.seat === link.seat) { // this page's seat is gone: its socket closes with 4003
      link.goneReason = ev.reason;
      goneFromTable(link, ev.reason);
      return;
    }
    if (ev.moved === link.seat) link.seat = ev.seat; // until the welcome of the socket reopened on 4004
  }
  // A phone passed around goes round the table once for each night step (pass.js).
  if (app.pass && fresh && link === app.links[0]) pass.noteEvent(app.pass, v, ev);
  // The dawn tells public news (deaths, the phase): one seat's stream is the table's.
  if (fresh && link === app.links[0]) {
    app.narrator.see(ev, before); // before the dawn's: it speaks the night's end, then the dawn
    app.dawn.see(ev, before);
    motion.see(ev, before);
    app.sound.see(ev, before);
  }
  if (fresh && ev.kind === "phase") app.chatPinned = false;
  if (fresh && ev.kind === "bot_seat" && link === app.links[0] && !app.pass) {
    // this page's own seat turned away: any move of its player takes the seat back
    toast(ev.bot && ev.seat === link.seat ? t("game.bot_plays_you") : feedText(ev));
  }
  // On a phone passed around, news for one seat alone waits for that seat to hold the phone
  // (also news replayed to a reloaded page, if the seat had not seen it).
  if (app.pass && link !== app.pass.holder && ev.seq > link.seen && pass.isPrivateNews(ev)) link.news += 1;
  // A replayed game_over still carries the full cards and chat for the end screen.
  if (ev.kind === "game_over") v.final = { alive: ev.alive, roles: ev.roles, chat: ev.chat };
  if (ev.seq > link.feedSeq) {
    link.feedSeq = ev.seq;
    if (inFeed(ev.kind)) {
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
  // What would only wait for the connection (an answer, a chat line) cannot be pressed without it.
  for (const node of document.querySelectorAll("[data-needs-connection]")) node.disabled = status.state !== "online";
  clearInterval(showConnStatus.timer);
  const paint = () => {
    if (status.state === "offline" && status.retryAt == null) {
      box.textContent = t("conn.reconnecting");
    } else if (status.state === "offline") {
      const s = Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000));
      box.textContent = t("conn.offline", { s });
    } else {
      box.textContent = t(`conn.${status.state}`);
    }
  };
  paint();
  if (status.retryAt != null) showConnStatus.timer = setInterval(paint, 500);
}

function renderPage() {
  if (app.pass) {
    passScreen.renderPass();
    return;
  }
  const v = app.here?.view;
  if (!v) return;
  if (v.status === "lobby") lobbyScreen.renderLobby(v);
  else if (v.status === "finished" || v.outcome) endScreen.renderEnd(v);
  else {
    tableScreen.renderGame(v);
    // Anyone may leave a running game (a bot plays on); not a spectator, nor a phone passed round.
    const me = v.players.find((p) => p.seat === app.here.seat);
    $("#game-leave").hidden = app.here.seat == null || !me || me.bot || v.status !== "running";
  }
  announceTurn(v);
}

// The prompts this seat has not answered yet: the tab title, a vibration, a sound, and a new
// one brought into view.
function announceTurn(v) {
  const open = v.status === "running" ? (v.prompts || []).map(promptKey).filter((key) => !app.here.answered[key]) : [];
  app.turn.setBaseTitle(v.room ? `${t("app.title")} · ${v.room}` : t("app.title"));
  tableScreen.showTurn(app.turn.update(open, t("turn.title")));
}

function showSound() {
  const on = app.sound.on;
  const button = $("#sound");
  button.textContent = "♪";
  button.classList.toggle("off", !on);
  button.setAttribute("aria-pressed", on ? "true" : "false");
  button.title = t(on ? "sound.on" : "sound.off");
}

function showNarrator() {
  $("#narrator").setAttribute("aria-pressed", app.narrator.on ? "true" : "false");
  $("#ambience").setAttribute("aria-pressed", app.narrator.ambienceOn ? "true" : "false");
  $("#ambience").hidden = $("#ambience-hint").hidden = !app.narrator.on; // the narrator's night
}

async function boot() {
  // The declaration (roles, house rules, presets): the host's form, the rules shown, the help.
  // Fetched once, before any room is shown; welcomes do not carry it (9.6 KB each).
  const declaration = loadDeclaration();
  const lang = pickLanguage();
  await setLanguage(lang);
  app.declared = await declaration;
  declare(app.declared.events); // the feed's lines, who heard what
  declareFacts(app.declared.facts); // what a seat's card shows
  const select = $("#lang");
  select.replaceChildren(...LANGS.map((l) => el("option", { value: l, text: t(`lang.${l}`) })));
  select.value = lang;
  app.sound = new Sound();
  app.turn = new TurnNotifier(t("app.title"), app.sound);
  motion.bind();
  // On a phone passed around the dawn waits for the phone to be down and the night gone round.
  // Shown there, it starts the day's clock (passScreen.dawnShown).
  app.narrator = new Narrator({ nameOf, roleName, audio: () => app.sound.audio });
  app.dawn = new Dawn({ nameOf, roleName, held: () => !!app.pass && (!!app.pass.holder || pass.nightLeft(app.pass)),
    shown: (day) => {
      app.narrator.dawnShown(day);
      if (app.pass) passScreen.dawnShown(day);
    } });
  showSound();
  showNarrator();
  tables.initHome({ seated, presets: (app.declared.presets || []).map((p) => p.id),
    players: { ...app.declared.players, phoneMin: pass.MIN_NAMES, phoneMax: pass.MAX_PLAYERS } });
  initLobbyTable({ send: (frame, options) => send(frame, options) });
  setRender(renderPage);
  bindForms();
  window.addEventListener("hashchange", route);
  setInterval(tableScreen.tick, 250);
  route();
}

boot();
