// Moderation at the table: leave (lobby), remove a seat (the host of a private lobby) or vote to
// remove it (anyone at a public lobby), the away mark, mute (this browser only) and report (to the
// operators, with the token this browser holds for the room). Used by the table's page and by the
// review page of a finished game.
import { isolate, t } from "./i18n.js";
import { el } from "./dom.js";
import { api, errorText } from "./http.js";
import { toast } from "./toast.js";

export const REASONS = ["abuse", "cheating", "afk", "name", "other"];
// Mutes follow the player's name, not the seat: a seat renumbered, or a player who leaves (or is
// removed) and sits down again at the table under that name, stays muted.
const muteKey = (room) => `ww:mutes:${room}`;
const seatKey = (room) => `ww:seat:${room}`;
const tokenKey = (room) => `ww:token:${room}`;

// ---------- mute: players whose chat lines this browser hides ----------

// The form a name is muted by: the room refuses a look-alike of a seated name, and this catches
// the plain ones (case, compatibility forms) of a name seen before.
const muteForm = (name) => String(name ?? "").normalize("NFKC").toLowerCase();

function muted(room) {
  try {
    return new Set(JSON.parse(localStorage.getItem(muteKey(room)) || "[]"));
  } catch {
    return new Set();
  }
}

export function isMuted(room, name) {
  return muted(room).has(muteForm(name));
}

export function toggleMute(room, name) {
  const names = muted(room);
  const form = muteForm(name);
  if (names.has(form)) names.delete(form);
  else names.add(form);
  if (names.size) localStorage.setItem(muteKey(room), JSON.stringify([...names].sort()));
  else localStorage.removeItem(muteKey(room));
}

// The lines to show and how many were hidden (lines without a seat are the Little Girl's: their
// writer is a letter, kept).
export function visibleLines(room, lines) {
  const names = muted(room);
  const shown = lines.filter((line) => line.seat == null || !names.has(muteForm(line.name)));
  return { shown, hidden: lines.length - shown.length };
}

export function hiddenNote(n) {
  return n ? el("li", { class: "muted mutednote", text: t("chat.muted_hidden", { n }) }) : null;
}

// ---------- the seat this browser held, for the review page ----------

export function rememberSeat(room, seat) {
  if (seat != null) localStorage.setItem(seatKey(room), String(seat));
}

// What the removed seat's page says as it goes home.
export function goneText(reason) {
  if (reason === "left") return t("mod.you_left");
  if (["host", "vote", "away"].includes(reason)) return t(`mod.you_removed.${reason}`);
  return t("mod.you_removed");
}

// ---------- the controls of one player entry ----------

// `p`: {seat, name, away}; `ctx`: { room, v, me (this page's seat, null for a spectator), token,
// lobby (the lobby's list), host (this page is the host's), send, nameOf, changed() }.
export function playerTools(p, ctx) {
  const nodes = [];
  if (p.away) nodes.push(el("span", { class: "chip away", "data-away": "1", text: t("mod.away") }));
  const votes = ctx.lobby ? ctx.v.remove_votes?.[p.seat] : null;
  if (votes?.votes) {
    nodes.push(el("span", { class: "muted removevotes",
      text: t("mod.remove_votes", { votes: votes.votes, needed: votes.needed, name: isolate(p.name) }) }));
  }
  if (p.seat === ctx.me) return nodes;
  const hush = isMuted(ctx.room, p.name);
  if (hush) nodes.push(el("span", { class: "chip mutedmark", text: t("mod.muted") }));
  const tools = [el("button", {
    type: "button", class: "mini mute", "data-fk": `mute:${p.seat}`, "aria-pressed": hush ? "true" : "false",
    onclick: () => { toggleMute(ctx.room, p.name); ctx.changed(); },
    text: t(hush ? "mod.unmute" : "mod.mute") })];
  if (ctx.me != null && ctx.token) {
    tools.push(el("button", { type: "button", class: "mini report", "data-fk": `report:${p.seat}`,
      onclick: () => openReport({ room: ctx.room, token: ctx.token, seat: p.seat, name: p.name }), text: t("mod.report") }));
    if (ctx.lobby && (ctx.v.public || ctx.host)) {
      tools.push(el("button", { type: "button", class: "mini remove", "data-fk": `remove:${p.seat}`,
        onclick: () => ctx.send({ type: "remove", seat: p.seat }).catch(() => {}),
        text: t(ctx.v.public ? "mod.vote_remove" : "mod.remove") }));
    }
  }
  nodes.push(el("span", { class: "tools" }, tools));
  return nodes;
}

// The review page: a Report button for each other player of a room this browser sat at.
export function reviewReport(room, p) {
  const token = localStorage.getItem(tokenKey(room));
  const mine = localStorage.getItem(seatKey(room));
  if (!token || String(p.seat) === mine) return null;
  return el("button", { type: "button", class: "mini report", "data-fk": `report:${p.seat}`,
    onclick: () => openReport({ room, token, seat: p.seat, name: p.name }), text: t("mod.report") });
}

// ---------- the report form ----------

// A dialog made afresh each time (in the page's language), sent to the room's reports.
export function openReport({ room, token, seat, name }) {
  document.querySelector("#report")?.remove();
  const reason = el("select", { name: "reason", id: "report-reason" },
    REASONS.map((r) => el("option", { value: r, text: t(`report.reason.${r}`) })));
  const text = el("textarea", { name: "text", id: "report-text", maxlength: 500, rows: 3 });
  const send = el("button", { type: "submit", class: "primary", id: "report-send", text: t("report.send") });
  const dialog = el("dialog", { id: "report", class: "help report", "aria-labelledby": "report-title", "data-seat": seat },
    el("form", { class: "stack" },
      el("h2", { id: "report-title", text: t("report.title", { name: isolate(name) }) }),
      el("p", { class: "hint", text: t("report.intro") }),
      el("label", {}, el("span", { text: t("report.reason") }), reason),
      el("label", {}, el("span", { text: t("report.text") }), text),
      el("div", { class: "row" }, send,
        el("button", { type: "button", id: "report-cancel", onclick: () => dialog.close(), text: t("report.cancel") }))));
  dialog.querySelector("form").addEventListener("submit", async (e) => {
    e.preventDefault();
    send.disabled = true;
    const body = { token, seat, reason: reason.value };
    if (text.value.trim()) body.text = text.value.trim().slice(0, 500);
    try {
      const answer = await api("POST", `/api/rooms/${encodeURIComponent(room)}/reports`, body);
      dialog.close();
      toast(t(answer.duplicate ? "report.duplicate" : "report.sent"));
    } catch (err) {
      toast(errorText(err));
    } finally {
      send.disabled = false;
    }
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  reason.focus();
}
