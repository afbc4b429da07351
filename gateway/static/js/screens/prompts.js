// The seat's prompts: its choices, the confirm and the pass, the ask-to-vote button, and on a
// phone passed around the "nothing to do" of a turn without a move.
import { t, has } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { promptKey } from "../state.js";
import * as pass from "../pass.js";
import { $, app, render, scheduleRender, send, nameOf, roleName, rememberAnswered } from "../app.js";

export function myCurrentChoice(link, p) {
  const v = link.view;
  if (p.action === "wolves.point") return v.pointing?.[link.seat];
  if (p.action === "vote" || p.action === "mayor.elect") return v.votes?.[link.seat];
  return undefined;
}

// A seat chosen for prompt `p`, from its buttons or from the table's seats (screens/table.js).
export function chooseSeat(link, p, seat) {
  const key = promptKey(p);
  const next = new Set(link.selected[key] || []);
  if (p.max <= 1) {
    next.clear();
    next.add(seat);
  } else if (next.has(seat)) next.delete(seat);
  else if (next.size < p.max) next.add(seat);
  link.selected[key] = next;
  render();
}

// The seats shown chosen: this page's selection, else the seat's standing choice or sent answer.
export function pickedSeats(link, p) {
  const key = promptKey(p);
  if (link.selected[key]?.size) return link.selected[key];
  return new Set([myCurrentChoice(link, p), ...(link.answered[key] || [])].filter((s) => s != null));
}

export function act(link, p, targets, options = {}) {
  const key = promptKey(p);
  send({ type: "act", action: p.action, targets }, options, link).then(() => {
    link.answered[key] = targets;
    rememberAnswered(link);
    delete link.selected[key];
    scheduleRender();
  }, () => {});
}

export function renderPrompts(link) {
  const v = link.view;
  const prompts = v.prompts || [];
  const nodes = prompts.map((p) => promptNode(link, p));
  if (!nodes.length) nodes.push(app.pass?.holder && pass.idleTurn(app.pass, link) ? idleNode(link) : el("p", { class: "muted", text: t("act.nothing") }));
  // Offered even without a prompt, so the button is there as soon as the discussion starts.
  if (v.phase === "day.discussion" && v.requests && v.me?.alive && !prompts.some((p) => p.action === "vote.request")) {
    nodes.push(requestNode(link, askToVote(v)));
  }
  rebuild($("#prompts"), nodes);
}

// A turn with nothing to do at night, on a phone passed around: one button saying so, the
// turn's move, then "Done" as after any move (pass.turnMade).
export function idleNode(link) {
  const said = app.pass.idle;
  return el("div", { class: "idle", id: "pass-idle", "data-picked": said ? "1" : null },
    el("h3", { text: t("pass.idle.title") }),
    el("p", { class: "hint", text: t("pass.idle.help") }),
    el("button", { type: "button", class: "pass", id: "pass-nothing", "data-fk": `${link.seat}:idle`,
      "aria-pressed": said ? "true" : "false", onclick: () => {
        app.pass.idle = true;
        render();
      }, text: t("pass.idle.button") }));
}

export const askToVote = (v) => ({ action: "vote.request", choices: [], min: 0, max: 0, deadline: v.deadline });

export function actionText(action, part, vars = {}) {
  return has(`action.${action}.${part}`) ? t(`action.${action}.${part}`, vars) : part === "title" ? t("action.unknown.title", { action }) : "";
}

// The card text of a role as the table plays it: a role the rules let the host play in one of
// several ways (`<role>_mode`: the Thief's) has one text per way, the general one else.
export function cardText(role, rules) {
  const mode = rules?.[`${role}_mode`];
  return mode != null && has(`explain_as.${role}.${mode}`) ? t(`explain_as.${role}.${mode}`) : t(`explain.${role}`);
}

const THIEF_TAKES = ["thief.take_first", "thief.take_second"];

// What a prompt's words name: the Thief's card set aside (his view's `thief_cards`).
function promptVars(v, p) {
  const i = THIEF_TAKES.indexOf(p.action);
  return i < 0 ? {} : { card: roleName(v.thief_cards?.[i]) };
}

// What the mayor weighs, said only where the table has one: the day's vote tells the double vote
// while one is in office, the election the ties the mayor breaks where the rules say so (its help
// says what the office is).
function mayorText(v, p) {
  if (p.action === "vote") return v.mayor != null ? [t("action.vote.mayor")] : [];
  if (p.action !== "mayor.elect") return [];
  return v.settings?.rules?.vote_tie === "mayor_chooses" ? [t("action.mayor.elect.tiebreak")] : [];
}

// What the prompt asks for. A yes-or-no on one player (the Witch's save, the infection) names
// him: "Pick one player, or pass" would not say what the one choice is.
function needText(p) {
  if (p.max === 0) return "";
  if (p.max === 1 && p.min === 0 && p.choices.length === 1) {
    const name = nameOf(p.choices[0]);
    return has(`action.${p.action}.choice`) ? t(`action.${p.action}.choice`, { name }) : t("act.one_or_pass", { name });
  }
  if (p.max === 1) return t(p.min === 1 ? "act.pick_one" : "act.pick_one_or_pass");
  return t(p.min === p.max ? "act.pick" : "act.pick_upto", { n: p.max });
}

// Asked as the discussion ends: the vote has begun, not some other seat's turn.
const tooLate = (err) => (err.code === "not_your_turn" ? t("action.vote.request.late") : null);

export function requestNode(link, p) {
  const r = link.view.requests || { count: 0, needed: null, mine: false };
  const vars = { count: r.count, needed: r.needed };
  // How many must ask is known once someone has asked (or from a welcome): no "?" before that.
  const counted = r.needed != null;
  const asked = r.mine || link.answered[promptKey(p)];
  return el("div", { class: "prompt", role: "group", "aria-label": actionText(p.action, "title"), "data-action": p.action,
    "data-key": promptKey(p), "data-answered": asked ? "1" : null },
    el("h3", { text: actionText(p.action, "title") }),
    el("p", { class: "hint", text: actionText(p.action, "help") }),
    asked
      ? el("p", { class: "ok", text: t(counted ? "action.vote.request.asked" : "action.vote.request.asked_first", vars) })
      : el("button", { type: "button", class: "primary", "data-fk": `${link.seat}:req`, onclick: () => act(link, p, [], { explain: tooLate }),
        text: t(counted ? "action.vote.request.button" : "action.vote.request.button_first", vars) }));
}

export function promptNode(link, p) {
  if (p.action === "vote.request") return requestNode(link, p);
  const v = link.view;
  const key = promptKey(p);
  const fk = `${link.seat}:${key}`; // one page may show several seats' prompts (a phone passed around)
  const sel = link.selected[key] || new Set();
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
  const choose = (seat) => chooseSeat(link, p, seat);
  const shownPicked = pickedSeats(link, p);
  const buttons = p.choices.map((seat) => {
    const picked = shownPicked.has(seat);
    const tally = v.tally?.[seat];
    return el("button", {
      type: "button", class: "choice", "data-seat": seat, "data-fk": `${fk}:${seat}`,
      "aria-pressed": picked ? "true" : "false", onclick: () => choose(seat),
      // read as the table's seat is: "Omar, votes against: 2"
      "aria-label": [nameOf(seat), tally ? t("table.votes_against", { n: tally }) : null].filter(Boolean).join(", "),
    }, el("span", { class: "name", text: nameOf(seat) }),
    tally ? el("span", { class: "count", text: t("players.votes", { n: tally }) }) : null);
  });
  const count = sel.size;
  // A prompt of no targets (the Little Girl's peek) is one button: the confirm itself.
  const ready = p.max === 0 || (count >= Math.max(1, p.min) && count <= p.max);
  const vars = promptVars(v, p);
  // One group per move, named by its title: a reader finds the move, its choices and its buttons together.
  return el("div", { class: "prompt", role: "group", "aria-label": actionText(p.action, "title"), "data-action": p.action,
    "data-key": key, "data-min": p.min, "data-max": p.max, "data-answered": answered ? "1" : null },
    el("h3", { text: actionText(p.action, "title") }),
    el("p", { class: "hint", text: [actionText(p.action, "help", vars), ...mayorText(v, p), needText(p)].filter(Boolean).join(" ") }),
    extra,
    el("div", { class: "choices" }, buttons),
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary confirm", "data-fk": `${fk}:ok`, disabled: !ready,
        onclick: () => act(link, p, [...sel]), text: p.max === 0 && has(`action.${p.action}.button`) ? t(`action.${p.action}.button`, vars) : t("act.confirm") }),
      p.min === 0 && p.max > 0 ? el("button", { type: "button", class: "pass", "data-fk": `${fk}:pass`,
        onclick: () => act(link, p, []), text: t("act.pass") }) : null),
    answered ? el("p", { class: "ok", text: t("act.sent") }) : null);
}
