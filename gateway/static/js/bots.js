// Bots at the table (issue 33): the robot badge every view puts on a seat a bot plays (a seat, a
// chat line, the lobby, the end, the review, the public list), and the lobby's host adding and
// removing bots. What is a bot comes from the view's `players` (`bot`), kept by state.js.
import { t } from "./i18n.js";
import { el } from "./dom.js";

// The seats bots play now (`players`: the view's, a review's).
export function botSeats(players) {
  return new Set((players || []).filter((p) => p.bot).map((p) => p.seat));
}

// A small robot drawn in SVG (no emoji font is assumed), with its word for screen readers.
export function botMark(className = "mark bot") {
  const label = t("bot.label");
  return el("span", { class: className, role: "img", "aria-label": label, title: label, "data-bot": "1" },
    el("svg:svg", { viewBox: "0 0 16 16", class: "bot-art", "aria-hidden": "true" },
      el("svg:line", { x1: "8", y1: "1.5", x2: "8", y2: "4" }),
      el("svg:circle", { cx: "8", cy: "1.5", r: "1.2" }),
      el("svg:rect", { x: "2.5", y: "4", width: "11", height: "9", rx: "2.5" }),
      el("svg:circle", { cx: "6", cy: "8.5", r: "1.3", class: "eye" }),
      el("svg:circle", { cx: "10", cy: "8.5", r: "1.3", class: "eye" })));
}

// The lobby's bot tools: the host of a private table adds a bot, and removes one from its entry.
// `ctx`: { v, host, local (one phone passed around), send(frame) }.
export function lobbyBots(box, ctx) {
  const { v, host } = ctx;
  const offered = host && !v.public && !ctx.local;
  box.hidden = !offered;
  const button = box.querySelector("#add-bot");
  if (!button.dataset.bound) {
    button.dataset.bound = "1";
    button.addEventListener("click", () => ctx.send({ type: "add_bot" }).catch(() => {}));
  }
}

// The remove button of a bot's entry in a private lobby (its host's page only), else null.
export function removeBotButton(p, { v, host, local, send }) {
  if (!p.bot || !host || v.public || local) return null;
  return el("button", { type: "button", class: "mini remove-bot", "data-fk": `remove-bot:${p.seat}`,
    onclick: () => send({ type: "remove_bot", seat: p.seat }).catch(() => {}), text: t("lobby.remove_bot") });
}
