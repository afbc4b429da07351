// The review page of a finished game (review.html#CODE): everything its stored log holds, every
// audience's events, since after the end nothing is secret: the deal, each night and day with who
// did what (what was secret at the time is marked), the votes, the deaths, every channel's chat,
// and the winners with why. Kept as long as the room is (WW_FINISHED_TTL, docs/protocol.md).
import { LANGS, pickLanguage, setLanguage, t, has } from "./i18n.js";
import { el, rebuild } from "./dom.js";
import { rolePicture } from "./art.js";
import { reviewReport } from "./moderation.js";

const $ = (sel) => document.querySelector(sel);
const BANNER = { no_wolves_alive: "villager", only_wolves_alive: "werewolf", village_side_killed: "werewolf",
  wolves_at_parity: "werewolf", lovers_last_alive: "cupid", piper_charmed_all: "piper" };
// Events only some seats got while the game ran.
const SECRET = new Set(["pointed", "seer_result", "witch_victim", "lovers", "role", "peeked", "little_girl_caught", "charmed"]);
const SKIPPED = new Set(["joined", "presence", "settings", "spectators", "prompt", "prompt_closed", "wolves", "cards", "game_started", "game_over"]);

const room = (location.hash.slice(1) || new URLSearchParams(location.search).get("room") || "").toUpperCase();
let review = null;

const isNight = (phase) => String(phase).startsWith("night.");
const roleName = (role) => (role ? t(`role.${role}`) : t("role.unknown"));

function nameOf(seat) {
  if (seat == null) return t("players.nobody");
  return review.players.find((p) => p.seat === Number(seat))?.name ?? `#${seat}`;
}

function names(seats) {
  return seats.map(nameOf).join(", ");
}

function phaseLabel(phase) {
  return has(`phase.${phase}`) ? t(`phase.${phase}`) : phase;
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

function seatWith(role, cards) {
  const hit = Object.entries(cards).find(([, r]) => r === role);
  return hit ? Number(hit[0]) : null;
}

function describe(ev, cards, causes = {}) { // the final deal and the hidden deaths' true causes: the whole story
  const cause = (c) => (has(`cause.${c}`) ? t(`cause.${c}`) : c);
  switch (ev.kind) {
    case "phase": return { text: phaseLabel(ev.phase), cls: "muted" };
    case "pointed": return { text: ev.target == null ? t("review.withdrew", { name: nameOf(ev.seat) })
      : t("review.pointed", { name: nameOf(ev.seat), target: nameOf(ev.target) }) };
    case "seer_result": return { text: t("review.seer", { name: nameOf(seatOf(ev) ?? seatWith("seer", cards)), target: nameOf(ev.seat), role: roleName(ev.role) }) };
    case "witch_victim": return { text: t("review.witch", { name: nameOf(seatOf(ev) ?? seatWith("witch", cards)), target: nameOf(ev.victim) }) };
    case "lovers": return { text: t("review.lovers", { names: ev.lovers.map(nameOf).join(" ♥ ") }) };
    case "role": return { text: t("review.role", { name: nameOf(seatOf(ev)), role: roleName(ev.role) }) };
    case "voted": return { text: ev.target == null ? t("review.abstained", { name: nameOf(ev.seat) })
      : t("review.voted", { name: nameOf(ev.seat), target: nameOf(ev.target) }) };
    case "vote_requested": return { text: t("review.requested", { name: nameOf(ev.seat), count: ev.count, needed: ev.needed }) };
    case "vote_result": {
      if (ev.phase === "day.election" || ev.phase === "day.runoff") {
        return { text: ev.target == null && ev.tie?.length > 1 ? t("feed.vote_result.tie", { names: names(ev.tie) })
          : t("feed.election_result", { name: nameOf(ev.target) }) };
      }
      if (ev.phase === "day.tiebreak") return { text: ev.target == null ? t("feed.tiebreak.none") : t("feed.tiebreak", { name: nameOf(ev.target) }) };
      const result = ev.target == null ? t("feed.vote_result.none") : t("feed.vote_result", { name: nameOf(ev.target) });
      return { text: ev.tie?.length > 1 ? `${t("feed.vote_result.tie", { names: names(ev.tie) })} ${result}` : result };
    }
    case "death": return { text: t("feed.death", { name: nameOf(ev.seat), cause: cause(causes[ev.seat] ?? ev.cause),
      role: roleName(ev.role ?? cards[ev.seat]) }) };
    case "mayor": return { text: ev.seat == null ? t("feed.mayor.none") : t(ev.how === "successor" ? "feed.mayor.successor" : "feed.mayor.elected", { name: nameOf(ev.seat) }) };
    case "candidate": return { text: t("feed.candidate", { name: nameOf(ev.seat) }) };
    case "idiot_revealed": return { text: t("feed.idiot_revealed", { name: nameOf(ev.seat) }) };
    case "powers_lost": return { text: t("feed.powers_lost", { name: nameOf(ev.seat) }) };
    case "scapegoat_voters": return { text: t("feed.scapegoat_voters", { names: names(ev.voters) }) };
    case "talkative_seer": return { text: ev.role == null ? t("feed.talkative_seer.none") : t("feed.talkative_seer", { role: roleName(ev.role) }) };
    case "peeked": return { text: t("review.peeked", { name: nameOf(seatOf(ev)), pointing: Object.entries(ev.pointing)
      .map(([letter, target]) => t("feed.peeked.wolf", { letter, name: target == null ? "—" : nameOf(target) })).join(", ") }) };
    case "little_girl_caught": return { text: t("review.caught", { name: nameOf(ev.seat) }) };
    case "charmed": return { text: t("feed.charmed", { names: names(ev.charmed) }) };
    default: return null;
  }
}

function chatNode(ev) {
  const channel = has(`chat.channel.${ev.channel}`) ? t(`chat.channel.${ev.channel}`) : ev.channel;
  return el("li", { "data-kind": "chat", "data-channel": ev.channel, "data-seq": ev.seq, class: ev.channel === "day" ? null : "secret" },
    el("span", { class: "channel", text: t("review.channel", { channel }) }),
    el("span", { class: "who", text: `${ev.name}: ` }), el("bdi", { text: ev.text }));
}

function timeline(events, cards, causes) {
  const periods = [];
  let current = null;
  for (const ev of events) {
    if (ev.kind === "phase") {
      const night = isNight(ev.phase);
      if (!current || current.night !== night || current.day !== ev.day) {
        current = { night, day: ev.day, items: [] };
        periods.push(current);
      }
    }
    if (!current || SKIPPED.has(ev.kind)) continue;
    if (ev.kind === "chat") {
      current.items.push(chatNode(ev));
      continue;
    }
    const line = describe(ev, cards, causes);
    if (line) current.items.push(el("li", { "data-kind": ev.kind, "data-seq": ev.seq,
      class: [line.cls, SECRET.has(ev.kind) ? "secret" : null].filter(Boolean).join(" ") || null, text: line.text }));
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
  $("#review-status").textContent = "";
  for (const id of ["#review-outcome", "#review-deal-card", "#review-timeline-card"]) $(id).hidden = false;
  rebuild($("#review-banner"), [rolePicture(BANNER[over?.reason] ?? null, { className: "banner-art" })]);
  $("#review-winners").textContent = winners.size ? t("review.winners", { names: names([...winners]) }) : t("end.no_winner");
  $("#review-reason").textContent = over && has(`end.reason.${over.reason}`) ? t(`end.reason.${over.reason}`) : over?.reason ?? "";
  rebuild($("#review-deal"), review.players.map((p) => {
    const dealt = first[p.seat];
    const last = final[p.seat] ?? final[String(p.seat)] ?? dealt;
    return el("li", { "data-seat": p.seat, "data-role": last, class: `${alive.has(p.seat) ? "alive" : "dead"}${winners.has(p.seat) ? " winner" : ""}` },
      rolePicture(last),
      el("div", {}, el("div", { class: "name", text: p.name }),
        el("div", { class: "muted", text: dealt && dealt !== last ? t("review.became", { first: roleName(dealt), last: roleName(last) }) : roleName(last) }),
        reviewReport(room, p))); // a room this browser sat at: report a player to the operators
  }));
  rebuild($("#review-timeline"), timeline(events, final, over?.causes ?? {}));
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
  const lang = pickLanguage();
  await setLanguage(lang);
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
