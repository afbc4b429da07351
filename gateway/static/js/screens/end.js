// The end: the banner and the reason (js/outcome.js), the winners, every card (an infected
// player's as infected), the nights' secret deeds and every channel's chat; playing again at the
// same table.
import { t } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { rolePicture } from "../art.js";
import { api, errorText } from "../http.js";
import { toast } from "../toast.js";
import { bannerRole, reasonText } from "../outcome.js";
import { dayLabel, infectedSeats, storyText } from "../events.js";
import * as pass from "../pass.js";
import * as mod from "../moderation.js";
import { botMark, botSeats } from "../bots.js";
import { $, app, showScreen, nameOf, roleName, isHost, tokenKey } from "../app.js";
import { channelLabel, chatLine } from "./chat.js";

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
  // What no event told while the game ran, night by night (the review tells the rest). A page
  // whose view came whole after the end (a reconnect's welcome) has no end event: the room's
  // review has it.
  if (!final.story) fetchStory(v);
  const story = final.story || [];
  rebuild($("#end-story"), !final.story ? [] : story.length ? story.map((entry) => el("li", { "data-what": entry.what, "data-night": entry.night },
    el("span", { class: "muted", text: `${dayLabel("night", entry.night)}: ` }), el("span", { text: storyText(entry, { nameOf }) })))
    : [el("li", { class: "muted", text: t("end.story_none") })]);
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

async function fetchStory(v) {
  if (app.storyFetched === v.room) return;
  app.storyFetched = v.room;
  try {
    const review = await api("GET", `/api/rooms/${v.room}/review`);
    const over = review.events.map((e) => e.event).find((ev) => ev.kind === "game_over");
    if (over && app.room === v.room) {
      v.final = { alive: over.alive, roles: over.roles, chat: over.chat, ...(v.final || {}), story: over.story };
      renderEnd(v);
    }
  } catch { /* the review link still tells it */ }
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
