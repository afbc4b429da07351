// The review page of a finished game (review.html#CODE): everything its stored log holds, every
// audience's events, since after the end nothing is secret: the deal, each night and day with who
// did what (what was secret at the time is marked), the votes, the deaths, every channel's chat,
// and the winners with why. Kept as long as the room is (WW_FINISHED_TTL, docs/protocol.md).
import { LANGS, isolate, pickLanguage, setLanguage, t, has } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { rolePicture } from "../art.js";
import { reviewReport } from "../moderation.js";
import { botMark } from "../bots.js";
import { declare, eventText, infectedSeats, isPublic, placeStory, REVIEW_SKIPS, storyText } from "../eventlines.js";
import { bannerRole, reasonText } from "../outcome.js";
import { loadDeclaration } from "../http.js";

const $ = (sel) => document.querySelector(sel);

const room = (location.hash.slice(1) || new URLSearchParams(location.search).get("room") || "").toUpperCase();
let review = null;

const isNight = (phase) => String(phase).startsWith("night.");
const roleName = (role) => (role ? t(`role.${role}`) : t("role.unknown"));

function nameOf(seat) {
  if (seat == null) return t("players.nobody");
  const name = review.players.find((p) => p.seat === Number(seat))?.name;
  return name == null ? `#${seat}` : isolate(name);
}

function names(seats) {
  return seats.map(nameOf).join(", ");
}

// The cards: as dealt (each seat's first `role` event) and at the end (game_over).
function deal(events) {
  const first = {};
  for (const ev of events) if (ev.kind === "role" && !(seatOf(ev) in first)) first[seatOf(ev)] = ev.role;
  const over = events.find((ev) => ev.kind === "game_over");
  return { first, final: over?.roles ?? {}, over };
}

// Who got an event while the game ran (the review keeps each event's audience).
function seatOf(ev) {
  return ev.to?.length === 1 ? ev.to[0] : null;
}

// The final deal and the hidden deaths' true causes: the whole story.
function describe(ev, cards, causes = {}) {
  return eventText(ev, { nameOf, roleName, seat: seatOf(ev), review: { cards, causes } });
}

function chatNode(ev) {
  const channel = has(`chat.channel.${ev.channel}`) ? t(`chat.channel.${ev.channel}`) : ev.channel;
  return el("li", { "data-kind": "chat", "data-channel": ev.channel, "data-seq": ev.seq, class: ev.channel === "day" ? null : "secret" },
    el("span", { class: "channel", text: t("review.channel", { channel }) }),
    el("span", { class: "who" }, el("bdi", { text: ev.name }), botAt(ev.seat) ? botMark() : null, ": "),
    el("bdi", { text: ev.text }));
}

// A seat a bot played at the end (the review's players: as the room last had them).
const botAt = (seat) => !!review.players.find((p) => p.seat === seat)?.bot;

// Every event the review tells, in its night or day, with the night's secret deeds no event told
// (game_over's story) before its dawn (eventlines.js placeStory, as the end screen tells them).
function timeline(events, cards, causes, story) {
  const items = [];
  let current = null;
  for (const ev of events) {
    if (ev.kind === "phase") current = { night: isNight(ev.phase), day: ev.day };
    if (!current || REVIEW_SKIPS.has(ev.kind)) continue;
    // what only some seats got while the game ran is marked
    const node = ev.kind === "chat" ? chatNode(ev) : el("li", { "data-kind": ev.kind, "data-seq": ev.seq,
      class: [ev.kind === "phase" ? "muted" : null, isPublic(ev) ? null : "secret"].filter(Boolean).join(" ") || null,
      text: describe(ev, cards, causes) });
    items.push({ ...current, kind: ev.kind, node });
  }
  placeStory(items, story, (entry) => ({ night: true, day: entry.night, kind: "story",
    node: el("li", { "data-kind": "story", "data-what": entry.what, class: "secret", text: storyText(entry, { nameOf }) }) }));
  const periods = [];
  for (const item of items) {
    const last = periods.at(-1);
    if (last?.night === item.night && last.day === item.day) last.items.push(item.node);
    else periods.push({ night: item.night, day: item.day, items: [item.node] });
  }
  return periods.map((p) => el("section", { class: "period", "data-night": p.night ? "1" : "0", "data-day": p.day },
    el("h3", { text: t(p.night ? "game.night" : "game.day", { n: p.day }) }),
    el("ol", { class: "plain" }, p.items)));
}

function render() {
  document.title = `${t("review.title", { room })} · ${t("app.title")}`;
  $("#review-title").textContent = t("review.title", { room });
  if (!review) return;
  $("#review-back").href = review.next ? `./#/r/${review.next}` : `./#/r/${room}`;
  const events = review.events.map((e) => ({ ...e.event, to: e.to }));
  const { first, final, over } = deal(events);
  const winners = new Set(over?.winners ?? []);
  const alive = new Set(over?.alive ?? []);
  const infected = infectedSeats(over?.story);
  $("#review-status").textContent = "";
  for (const id of ["#review-outcome", "#review-deal-card", "#review-timeline-card"]) $(id).hidden = false;
  rebuild($("#review-banner"), [rolePicture(bannerRole(over?.reason), { className: "banner-art" })]);
  $("#review-winners").textContent = winners.size ? t("review.winners", { names: names([...winners]) }) : t("end.no_winner");
  $("#review-reason").textContent = reasonText(over?.reason);
  rebuild($("#review-deal"), review.players.map((p) => {
    const dealt = first[p.seat];
    const last = final[p.seat] ?? final[String(p.seat)] ?? dealt;
    const card = infected.has(p.seat) ? t("end.infected", { role: roleName(last) }) : roleName(last);
    return el("li", { "data-seat": p.seat, "data-role": last, "data-infected": infected.has(p.seat) ? "1" : null,
      "data-bot": p.bot ? "1" : null, class: `${alive.has(p.seat) ? "alive" : "dead"}${winners.has(p.seat) ? " winner" : ""}` },
      rolePicture(last),
      el("div", {}, el("div", { class: "name" }, p.name, p.bot ? botMark() : null),
        el("div", { class: "muted", text: dealt && dealt !== last ? t("review.became", { first: roleName(dealt), last: card }) : card }),
        reviewReport(room, p))); // a room this browser sat at: report a player to the operators
  }));
  rebuild($("#review-timeline"), timeline(events, final, over?.causes ?? {}, over?.story ?? []));
}

async function load() {
  let res;
  try {
    res = await fetch(`/api/rooms/${encodeURIComponent(room)}/review`);
  } catch {
    $("#review-status").textContent = t("error.network");
    return;
  }
  if (res.status === 409) $("#review-status").textContent = t("review.not_over");
  else if (!res.ok) $("#review-status").textContent = t("review.gone");
  else review = await res.json();
  render();
}

async function boot() {
  const declaration = loadDeclaration(); // which kinds were public: the secrets are marked
  const lang = pickLanguage();
  await setLanguage(lang);
  declare((await declaration).events);
  const select = $("#lang");
  select.replaceChildren(...LANGS.map((l) => el("option", { value: l, text: t(`lang.${l}`) })));
  select.value = lang;
  select.addEventListener("change", async () => {
    await setLanguage(select.value, { persist: true });
    render();
  });
  document.body.dataset.phase = "over";
  await load();
}

boot();
