// One phone passed around, as the page shows it: the names form, the covers between players, the
// holder's own screen, the table's screen by day (js/pass.js decides whose turn it is).
import { t } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { api, errorText } from "../http.js";
import { toast } from "../toast.js";
import { promptKey } from "../state.js";
import * as pass from "../pass.js";
import { $, app, render, send, showScreen, nameOf, isHost } from "../app.js";
import { renderLobby, sendSettings } from "./lobby.js";
import { renderGame } from "./table.js";
import { renderEnd } from "./end.js";
import { act, askToVote, promptNode } from "./prompts.js";

export const FIRST_NAMES = 6; // rows the names form opens with

export let freshPass = null; // the room this page has just seated: it gets seed 004's preset once

// The phone passed around, as it plugs into the game's screen (screens/table.js, the shape of its
// ONLINE): the players sit at one table; the holder's bar over a seat's screen, and with no seat
// holding the phone the table's own screen.
const PASSED = {
  together: true,
  show(v, seatless) {
    $("#pass-bar").hidden = seatless;
    $("#pass-table").hidden = !seatless;
    if (seatless) renderPassTable(v);
  },
};

// Whose screen shows: the lobby (the table's rules) until the start; then the player holding the
// phone, or else the cover naming whose turn it is (pass.turn: the rounds), or else the table's
// own screen (the day's votes); the end for all. The dawn waits until the night's rounds are over
// and the phone is down. A reload starts from a cover or the table's screen, never a seat's.
export function renderPass() {
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
    // The server learns that this table is on one phone, and which seats are on it (it then
    // follows the phone's pace; any other seat plays online), at every lobby of it: the next
    // game's too, and again when a seat is added here.
    const mine = p.seats.join();
    const marked = v.players.filter((pl) => pl.phone).map((pl) => pl.seat).join();
    if (isHost(v) && (!v.phone || marked !== mine) && p.marking !== mine) {
      p.marking = mine;
      send({ type: "table", public: false, phone: true, phone_seats: p.seats }, {}, links[0])
        .catch(() => (p.marking = null));
    }
    return;
  }
  if (v.status === "finished" || v.outcome) {
    if (p.holder || p.calling) {
      clearGame();
      app.dawn.close();
    }
    p.holder = p.calling = null;
    p.rounds = [];
    app.here = tableLink(links);
    renderEnd(app.here.view);
    return;
  }
  if (p.holder) {
    // its own link, seen as its round's step stood if that step is over (pass.turnView)
    const then = pass.turnView(p.holder, pass.currentRound(p));
    app.here = then ? Object.create(p.holder, { view: { value: then.view }, feed: { value: then.feed } }) : p.holder;
    renderGame(app.here.view, PASSED);
    $("#pass-who").textContent = t("pass.holder", { name: nameOf(p.holder.seat) });
    $("#pass-done").disabled = !pass.turnMade(p, app.here);
    return;
  }
  pass.noteStep(p, v, links[0].feedSeq);
  pass.noteNews(p, links);
  const round = pass.currentRound(p);
  p.calling = round ? links.find((l) => l.seat === pass.turn(p)) ?? null : null;
  if (!pass.nightLeft(p)) app.dawn.release(); // the phone is down and the night gone round
  if (p.calling) {
    showCover(p.calling, round);
    return;
  }
  app.here = tableLink(links);
  renderGame(app.here.view, PASSED);
}

// The table's own screen: no seat, what every seat knows alike.
export function tableLink(links) {
  return { seat: null, view: pass.publicView(links), feed: pass.publicFeed(links), selected: {}, answered: {} };
}

// Between two players: nothing of the last screen stays in the page, shown or hidden. (The dawn
// is the table's: it may show on a cover, and goes when a player takes the phone.)
export function clearGame() {
  for (const sel of ["#card-art", "#card-facts", "#prompts", "#table", "#players", "#feed", "#chat-log",
    "#chat-tabs", "#pass-prompts", "#game-roles", "#game-rules"]) $(sel).replaceChildren();
  for (const sel of ["#card-role", "#card-explain", "#waiting", "#pass-who"]) $(sel).textContent = "";
  $("#card").dataset.role = "";
  $("#toast").hidden = true;
  if ($("#help").open) $("#help").close();
}

// A night round's cover looks like its step's, even once the server has moved on.
export function showCover(link, round) {
  app.here = tableLink(app.links); // what names and the dawn may read meanwhile: the public table
  clearGame();
  showScreen("screen-cover");
  document.body.dataset.phase = round.night ? round.phase : app.links[0].view.phase;
  const name = nameOf(link.seat);
  $("#cover-title").textContent = t("pass.cover.title", { name });
  $("#cover-hint").textContent = t(round.night ? "pass.cover.night" : "pass.cover.day", { name });
  const seconds = pass.turnSeconds(link, round);
  $("#cover-turn").textContent = seconds == null ? "" : t("pass.cover.turn", { s: seconds });
  const show = $("#cover-show");
  show.textContent = t("pass.cover.show", { name });
  show.dataset.seat = link.seat;
}

// By day, every seat's public prompt (the vote, a shot...) under its name, and one button for the
// table to ask for the vote; at night, nothing: the phone calls each player in turn.
export function renderPassTable(v) {
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

const quietLate = (err) => (err.code === "not_your_turn" ? "" : null);

// The phone shows the dawn of `day`: the day's clock starts now on the server (RULES.md "One
// phone"), so its whole time is on the table's screen.
export function dawnShown(day) {
  send({ type: "dawn_shown", day }, { explain: quietLate }, app.links[0]).catch(() => {});
}

export function showPassNames() {
  showScreen("screen-pass");
  const list = $("#pass-names");
  while (list.childElementCount < FIRST_NAMES) addPassName();
  labelPassNames();
}

export function addPassName() {
  $("#pass-names").append(el("li", { class: "passname" },
    el("input", { name: "player", maxlength: 24, required: true, autocomplete: "off" }),
    el("button", { type: "button", class: "remove", onclick: (e) => {
      e.currentTarget.closest("li").remove();
      labelPassNames();
    } })));
}

export function labelPassNames() {
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

// The host seats a player who shares this phone (RULES.md "One phone + online"): the seat is
// joined like any, and this page holds it; a page that held only its own seat online becomes
// the phone's (its host's seat on the phone too), and keeps the link for the others.
async function addPhoneSeat(name, reseat) {
  const room = app.room;
  const seat = await api("POST", `/api/rooms/${room}/join`, { name });
  const host = app.links[0];
  const seats = pass.loadSeats(room) ?? [{ seat: host.seat, token: host.token,
    name: host.view.players.find((p) => p.seat === host.seat).name }];
  pass.saveSeats(room, [...seats, { seat: seat.seat, name, token: seat.token }]);
  if (app.pass) {
    reseat(); // the same page, one socket more
  } else {
    pass.markOnline(room);
    location.hash = `#/p/${room}`;
  }
}

// `reseat()`: the page opens its seats' sockets again (main.js).
export function bind(reseat) {
  $("#phone-seats").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = e.currentTarget.querySelector("input");
    const name = input.value.trim();
    const button = e.submitter;
    button.disabled = true;
    try {
      await addPhoneSeat(name, reseat);
      // a name typed meanwhile (the host goes on to the next player) is kept
      if (input.value.trim() === name) input.value = "";
    } catch (err) {
      toast(t("pass.refused", { name, why: errorText(err) }));
    } finally {
      button.disabled = false;
    }
  });
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
    pass.take(p, Date.now());
    app.dawn.close();
    render();
    window.scrollTo(0, 0);
  });
  $("#pass-done").addEventListener("click", () => {
    const p = app.pass;
    if (!p?.holder) return;
    const round = pass.currentRound(p);
    pass.putDown(app.room, p.holder, p);
    const done = pass.roundDone(p, round, app.links[0].view);
    // the step may be over already (its time ran out first): that answer changes nothing
    if (done) send({ type: "round_done", ...done }, { explain: quietLate }, app.links[0]).catch(() => {});
    p.holder = null;
    clearGame();
    render();
    window.scrollTo(0, 0);
  });
}
