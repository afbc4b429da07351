// The end: the banner and the reason (js/outcome.js), the winners, every card (an infected
// player's as infected), the nights' secret deeds and every channel's chat; playing again at the
// same table.
import { t } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { rolePicture } from "../art.js";
import { api, errorText } from "../http.js";
import { toast } from "../toast.js";
import { bannerRole, reasonText } from "../outcome.js";
import { dayLabel, infectedSeats, secrets, storyText } from "../eventlines.js";
import * as pass from "../pass.js";
import * as mod from "../moderation.js";
import * as guide from "../guide.js";
import { botMark, botSeats } from "../bots.js";
import { $, app, showScreen, nameOf, roleName, isHost, tokenKey } from "../app.js";
import { chatLine } from "./chat.js";

export const NEXT_POLL_MS = 2000;

// A finished room's facts name the next game once its host has opened it; every seat keeps its
// token there (the server seats each player with the same one), so the page simply moves on.
export function watchForNext() {
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

export function follow(next) {
  toast(t("end.again_started"));
  if (app.watching) { // a spectator watches the next game too
    location.hash = `#/w/${next}`;
    return;
  }
  if (app.pass) {
    // the same seats and tokens; what each has seen counts the old room's events
    pass.saveSeats(next, pass.loadSeats(app.room).map(({ seen, ...seat }) => seat));
    if (pass.invitesOnline(app.room)) pass.markOnline(next); // the players online come along
    location.hash = `#/p/${next}`;
    return;
  }
  localStorage.setItem(tokenKey(next), app.links[0].token);
  location.hash = `#/r/${next}`;
}

export function renderEnd(v) {
  showScreen("screen-end");
  document.body.dataset.phase = "over";
  $("#again").hidden = !isHost(v);
  $("#again-wait").hidden = isHost(v) || app.watching;
  $("#review-link").href = `review.html#${v.room}`;
  watchForNext();
  if (app.here.seat != null && !app.pass) guide.firstGameOver();
  const final = v.final || {};
  const winners = v.outcome?.winners || [];
  $("#end-me").textContent = app.here.seat == null ? "" : winners.includes(app.here.seat) ? t("end.you_won") : t("end.you_lost");
  rebuild($("#end-banner"), [rolePicture(bannerRole(v.outcome?.reason), { className: "banner-art" })]);
  $("#end-winners").textContent = winners.length ? t("end.winners", { names: winners.map(nameOf).join(", ") }) : t("end.no_winner");
  const reason = v.outcome?.reason;
  $("#end-reason").textContent = reasonText(reason);
  const roles = final.roles || {};
  const infected = infectedSeats(final.story);
  const alive = new Set(final.alive || (v.seats || []).filter((s) => s.alive).map((s) => s.seat));
  const bots = botSeats(v.players);
  rebuild($("#end-cards"), (v.seats || []).map((s) => {
    const role = roles[s.seat] ?? s.role;
    const card = infected.has(s.seat) ? t("end.infected", { role: roleName(role) }) : roleName(role);
    return el("li", { class: `player ${alive.has(s.seat) ? "alive" : "dead"}`, "data-seat": s.seat, "data-role": role,
      "data-infected": infected.has(s.seat) ? "1" : null, "data-bot": bots.has(s.seat) ? "1" : null },
      el("span", { class: "name", text: s.name }),
      bots.has(s.seat) ? botMark() : null,
      el("span", { class: "chip role", text: card }),
      el("span", { class: "state", text: alive.has(s.seat) ? t("players.alive") : t("players.dead") }),
      winners.includes(s.seat) ? el("span", { class: "badge", role: "img", "aria-label": t("end.winner"), title: t("end.winner"), text: "★" }) : null);
  }));
  // What the game kept secret, night by night and day by day, as its review tells it (fetched
  // once the game is over); until the review comes (or if it cannot), the end's own story.
  const review = app.endReview?.room === v.room ? app.endReview : null;
  if (!review) fetchReview(v);
  const told = review ? secrets(review.events, review.over, { nameOf, roleName })
    : (final.story || []).map((entry) => ({ night: true, day: entry.night, kind: "story", what: entry.what,
      text: storyText(entry, { nameOf }) }));
  rebuild($("#end-story"), !review && !final.story ? [] : told.length ? told.map((item) =>
    el("li", { "data-kind": item.kind, "data-what": item.what, "data-night": item.night ? item.day : null },
      el("span", { class: "muted", text: `${dayLabel(item.night ? "night" : "day", item.day)}: ` }), el("span", { text: item.text })))
    : [el("li", { class: "muted", text: t("end.story_none") })]);
  // Every channel's lines in one list, in the order they were written, each with its badge.
  const lines = [...(final.chat || Object.values(v.chat || {}).flat())].sort((a, b) => a.ts - b.ts);
  const { shown, hidden } = mod.visibleLines(app.room, lines);
  rebuild($("#end-chat"), [el("ol", { class: "plain chatlog" }, shown.map(chatLine), mod.hiddenNote(hidden))]);
}

// The finished game's review: its whole log, every audience's events.
async function fetchReview(v) {
  if (app.reviewFetched === v.room) return;
  app.reviewFetched = v.room;
  try {
    const answer = await api("GET", `/api/rooms/${v.room}/review`);
    const events = answer.events.map((e) => ({ ...e.event, to: e.to }));
    const over = events.find((ev) => ev.kind === "game_over");
    if (over && app.room === v.room) {
      app.endReview = { room: v.room, events, over };
      v.final = { alive: over.alive, roles: over.roles, chat: over.chat, ...(v.final || {}), story: over.story };
      renderEnd(v);
    }
  } catch { /* the end's own story stays, and the review link tells the rest */ }
}

export function bind() {
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
}
