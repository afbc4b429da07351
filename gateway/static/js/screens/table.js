// The game's screen: the phase and its clock, whom the table waits for, the seat's card, the
// players, the feed (the table and the prompts, the chat have their own modules), and the help;
// the table's seats as a prompt's choices, and a new prompt brought into view and announced.
import { t, has, keys, isolate } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { rolePicture } from "../art.js";
import { renderTable } from "../table.js";
import { dayLabel } from "../eventlines.js";
import { factLines } from "../facts.js";
import { promptKey } from "../state.js";
import * as motion from "../motion.js";
import * as mod from "../moderation.js";
import { botMark, botSeats } from "../bots.js";
import { $, app, HIDE_CARD_KEY, render, showScreen, nameOf, roleName, cardHidden, connDot, feedText, phaseLabel,
  roleChips, shownRules, ruleValue, toolsContext } from "../app.js";
import { renderPrompts, chooseSeat, pickedSeats, actionText, cardText } from "./prompts.js";
import { renderChat } from "./chat.js";
import { shownDeadline } from "../pass.js";
import * as guide from "../guide.js";

// Every card the catalogue explains, in its order: a new role's help comes with its keys.
export const helpRoles = () => keys("explain.").map((key) => key.slice("explain.".length));

// One section per card, from the catalogue (the basic cards and those in play): what it does, how
// it plays and a tip (`explain.`, `howto.`, `tip.<role>`: a new role's help comes with its keys).
// Opened at its top (its title takes the focus: the dialog would give it to its last control,
// Close, and open scrolled to its end), or at `role`'s section when given.
export function openHelp(role) {
  $("#help-guide").checked = guide.guideOn();
  rebuild($("#help-roles"), helpRoles().map((r) => el("section", { id: `help-${r}`, "data-role": r, class: "helprole" },
    rolePicture(r, { className: "help-art" }),
    el("div", {}, el("h3", { text: roleName(r) }), el("p", { text: cardText(r, app.here?.view?.settings?.rules) }),
      el("p", { class: "howto", text: t("help.howto", { how: t(`howto.${r}`) }) }),
      el("p", { class: "tip", text: t("help.tip", { tip: t(`tip.${r}`) }) })))));
  renderSetupTable();
  $("#help").showModal();
  $("#help-title").focus();
  $("#help").scrollTop = 0;
  if (role) $(`#help-${role}`)?.scrollIntoView({ block: "start" });
}

// Seed 004's recommended table, one row per size: the server's `by_size`, made by the code
// that deals (rules.presets.recommended_setup), never a copy of it.
export function renderSetupTable() {
  const preset = (app.declared?.presets || []).find((p) => p.by_size);
  if (!preset) return;
  const sizes = Object.keys(preset.by_size).map(Number).sort((a, b) => a - b);
  const cards = [...new Set(sizes.flatMap((n) => Object.keys(preset.by_size[n])))];
  rebuild($("#help-004-table"), [
    el("tr", {}, el("th", { text: t("help.004.players") }), ...cards.map((c) => el("th", { text: roleName(c) }))),
    ...sizes.map((n) => el("tr", { "data-size": n }, el("td", { text: String(n) }),
      ...cards.map((c) => el("td", { text: String(preset.by_size[n][c] || 0) }))))]);
}

// A mode of play plugs into the game's screen through this shape; online play, one seat per page,
// is the default. `together`: the players sit at one table (no chat, no hiding one's card: the
// mode keeps the screens apart); `show(v, seatless)`: the mode's own parts of the screen, drawn
// or hidden (one phone passed around: its holder's bar, the table's screen; screens/pass.js).
const ONLINE = { together: false, show: () => {} };

export function renderGame(v, mode = ONLINE) {
  showScreen("screen-game");
  document.body.dataset.phase = v.phase;
  $("#phase-name").textContent = phaseLabel(v);
  $("#phase-day").textContent = dayLabel(v.phase, v.day);
  // Written only when the phase changes: a live region says every write.
  const said = [phaseLabel(v), dayLabel(v.phase, v.day)].filter(Boolean).join(", ");
  if ($("#phase-live").textContent !== said) $("#phase-live").textContent = said;
  tick();
  renderWaiting(v);
  // No seat: a spectator, or the table's own screen of a mode played together (its votes).
  const seatless = app.here.seat == null;
  $("#spectating").hidden = !app.watching;
  $("#card").hidden = seatless;
  $("#act").hidden = seatless;
  renderTable($("#table"), v, { me: app.here.seat, hideMine: cardHidden(), nameOf, roleName,
    pick: seatless ? null : seatPick(app.here) });
  if (!seatless) {
    renderCard(v, mode);
    renderPrompts(app.here);
  }
  guide.renderGuide(v, app.here, mode === ONLINE && !seatless);
  mode.show(v, seatless);
  renderPlayers(v);
  rebuild($("#game-roles"), roleChips(v.roles_in_play));
  // the house rules the table plays (those off the card's default), for every seat all game long;
  // a table with none shows no heading over nothing
  const rules = shownRules(v);
  $("#game-rules-title").hidden = !rules.length;
  rebuild($("#game-rules"), rules.flatMap((r) =>
    [el("dt", { "data-key": r.id, text: t(`rule.${r.id}`) }), el("dd", { text: ruleValue(r.id, v.settings.rules[r.id]) })]));
  // Players at one table talk there.
  $("#chat-card").hidden = mode.together;
  if (!mode.together) renderChat(v);
  renderFeed();
}

// The prompt the table's seats answer: the first that asks for players, unanswered ones first (a
// vote, answered, stays open to be changed). `choose` finds it again at the tap: a seat's button
// may outlive the render that drew it (dom.js's rebuild keeps nodes that come out the same).
function seatPrompt(link) {
  const asking = (link.view.prompts || []).filter((p) => p.max > 0 && p.choices.length);
  return asking.find((p) => !link.answered[promptKey(p)]) || asking[0] || null;
}

function seatPick(link) {
  const p = seatPrompt(link);
  return p && { choices: new Set(p.choices), picked: pickedSeats(link, p), choose: (seat) => {
    const now = seatPrompt(link);
    if (now?.choices.includes(seat)) chooseSeat(link, now, seat);
  } };
}

// A prompt this page has not announced yet (`fresh`: their keys): told to a screen reader, the
// move's card called out, and scrolled into view under the sticky bars if it is not in view (on a
// phone it is under the table; the dawn's banner over it goes by itself). Not while the player types.
export function showTurn(fresh) {
  const p = (app.here?.view?.prompts || []).find((q) => fresh.includes(promptKey(q)));
  if (!p) return;
  $("#turn-live").textContent = t("turn.live", { action: actionText(p.action, "title") });
  const act = $("#act");
  act.classList.remove("called");
  void act.offsetWidth; // the call-out starts again for the next prompt
  act.classList.add("called");
  const node = $(`#prompts .prompt[data-key="${CSS.escape(promptKey(p))}"]`);
  if (!node || document.activeElement?.matches("input, textarea")) return;
  const top = $(".phasebar").getBoundingClientRect().bottom + 8;
  const box = node.getBoundingClientRect();
  if (box.top >= top && box.bottom <= innerHeight) return;
  scrollBy({ top: box.top - top, behavior: motion.reducedMotion() ? "auto" : "smooth" });
}

export function tick() {
  const v = app.here?.view;
  const box = $("#countdown");
  let text = "";
  const deadline = v && shownDeadline(app.pass, v); // on one phone: the holder's own turn's
  if (deadline && v.status === "running") {
    text = t("game.left", { s: Math.max(0, Math.ceil((deadline - Date.now()) / 1000)) });
  }
  // Four ticks a second: written only when it changes, so an idle page does no layout work.
  if (box.textContent !== text) box.textContent = text;
}

// From view.waiting when known, else from the phase and the public votes; never more.
export function renderWaiting(v) {
  let who = null;
  if (v.phase === "day.election" || v.phase === "day.vote") {
    const votes = v.votes || {};
    who = (v.seats || []).filter((s) => s.alive && !(s.seat in votes)).map((s) => isolate(s.name)).join(", ");
  } else if (v.waiting?.seats?.length) {
    who = v.waiting.seats.map(nameOf).join(", ");
  } else if (v.waiting?.action && has(`waiting.role.${v.waiting.action}`)) {
    who = t(`waiting.role.${v.waiting.action}`);
  } else if (has(`waiting.phase.${v.phase}`)) {
    who = t(`waiting.phase.${v.phase}`);
  }
  $("#waiting").textContent = who ? t("waiting.for", { who }) : "";
}

export function renderCard(v, mode) {
  const me = v.me || {};
  const card = $("#card");
  card.dataset.role = me.role || "";
  const hide = cardHidden();
  const toggle = $("#card-hide");
  toggle.hidden = mode.together;
  toggle.textContent = t(hide ? "card.show" : "card.hide");
  toggle.setAttribute("aria-pressed", hide ? "true" : "false");
  $("#card-role").textContent = hide ? t("card.hidden") : roleName(me.role);
  const turning = hide ? null : motion.motionStyle("card"); // the card turned over: the deal, a theft
  const picture = rolePicture(hide ? null : me.role, { className: `card-picture${turning ? " turning" : ""}` });
  if (turning) {
    picture.style.cssText = turning;
    picture.dataset.motion = "card";
  }
  rebuild($("#card-art"), [picture]);
  $("#card-explain").textContent = hide || !me.role ? "" : cardText(me.role, v.settings?.rules);
  $("#card-help").hidden = hide || !me.role;
  if (hide) {
    rebuild($("#card-facts"), []);
    return;
  }
  const facts = [];
  if (me.alive === false) facts.push(el("li", { class: "warn", text: t("card.dead") }));
  if (v.mayor === app.here.seat) facts.push(el("li", { text: t("card.mayor") }));
  // then what the seat knows by its card, as its role declares it (facts.js)
  for (const fact of factLines(v, { me: app.here.seat, nameOf, roleName })) {
    facts.push(el("li", { "data-fact": fact.field, text: fact.text }));
  }
  rebuild($("#card-facts"), facts);
}

export function renderPlayers(v) {
  const online = new Map(v.players.map((p) => [p.seat, p.connected]));
  const away = new Map(v.players.map((p) => [p.seat, !!p.away]));
  const tools = toolsContext(v, false);
  const bots = botSeats(v.players);
  rebuild($("#players"), (v.seats || []).map((s) => {
    const voted = v.votes?.[s.seat];
    const points = v.pointing?.[s.seat];
    const tally = v.tally?.[s.seat];
    return el("li", {
      class: `player ${s.alive ? "alive" : "dead"} ${s.seat === app.here.seat ? "me" : ""}`,
      "data-seat": s.seat, "data-alive": s.alive ? "1" : "0", "data-role": s.role || null,
      "data-bot": bots.has(s.seat) ? "1" : null,
    },
      bots.has(s.seat) ? null : connDot(online.get(s.seat)),
      el("span", { class: "name", text: s.name }),
      bots.has(s.seat) ? botMark() : null,
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

// A run of players sitting down (the lobby replayed to a fresh page) is one line, not one each.
export function renderFeed() {
  const feed = app.here.feed;
  const lines = [];
  feed.forEach((ev, i) => {
    const last = lines.at(-1);
    if (ev.kind === "joined" && last?.joined) last.joined.push(ev);
    else lines.push({ ev, next: feed[i + 1], joined: ev.kind === "joined" ? [ev] : null });
  });
  const seated = (ev) => (ev.bot ? `${isolate(ev.name)} (${t("bot.label")})` : isolate(ev.name));
  rebuild($("#feed"), lines.map(({ ev, next, joined }) => el("li", { "data-kind": ev.kind, "data-seq": ev.seq,
    text: joined?.length > 1 ? t("event.joined.many", { names: joined.map(seated).join(", ") }) : feedText(ev, next) })).reverse());
}

export function bind() {
  $("#card-hide").addEventListener("click", () => {
    app.cardHidden = !app.cardHidden;
    localStorage.setItem(HIDE_CARD_KEY, app.cardHidden ? "1" : "0");
    if (!app.cardHidden) motion.start("card");
    render();
  });
  $("#help-open").addEventListener("click", () => openHelp(null));
  $("#help-guide").addEventListener("change", (e) => {
    guide.setGuide(e.target.checked);
    render();
  });
  guide.bind(render);
  $("#card-help").addEventListener("click", () => openHelp(app.here?.view?.me?.role));
}
