// The guide of a first game: a card on the game's screen of the first game this browser plays,
// under the move, saying what is happening now (by the phase) and what this seat can do (its
// move, or why it has none). It goes once that game is over, or when the player turns it off; the
// help turns it back on. It tells nothing the screen does not: the phase, this seat's own prompts
// and life.
import { t, has } from "./i18n.js";
import { promptKey } from "./state.js";

const GUIDE_KEY = "ww:guide"; // "off": not shown (turned off, or the first game is over)
const $ = (sel) => document.querySelector(sel);

export const guideOn = () => localStorage.getItem(GUIDE_KEY) !== "off";

export function setGuide(on) {
  localStorage.setItem(GUIDE_KEY, on ? "on" : "off");
}

// The phase's family, as the guide words it: the night, the election, the talk, the vote, or a
// death's last move (a hunter's shot, a mayor's successor, the scapegoat's choice).
function stage(phase) {
  const p = String(phase);
  if (p.startsWith("night.")) return "night";
  if (["day.candidacy", "day.election", "day.runoff"].includes(p)) return "election";
  if (p === "day.discussion") return "discussion";
  if (["day.vote", "day.revote", "day.tiebreak"].includes(p)) return "vote";
  return "reaction";
}

// What this seat can do now: its first unanswered move, else what its state leaves it.
function doing(v, link, when) {
  if (!v.me?.alive) return t("guide.do.dead");
  const open = (v.prompts || []).find((p) => !link.answered[promptKey(p)]);
  if (open) {
    const action = has(`action.${open.action}.title`) ? t(`action.${open.action}.title`) : open.action;
    return t("guide.do.move", { action });
  }
  if ((v.prompts || []).length) return t("guide.do.sent");
  return t(`guide.do.${when}`);
}

// `shown`: a seat's own game online (not a spectator's page, nor a phone passed around, whose
// holders change under it).
export function renderGuide(v, link, shown) {
  const box = $("#guide");
  box.hidden = !(shown && guideOn() && v.status === "running");
  if (box.hidden) return;
  const when = stage(v.phase);
  box.dataset.stage = when;
  $("#guide-now").textContent = t(`guide.now.${when}`);
  $("#guide-do").textContent = doing(v, link, when);
}

// The first game is over: the guide has done its work (the help can turn it on again).
export function firstGameOver() {
  if (guideOn()) setGuide(false);
}

export function bind(render) {
  $("#guide-off").addEventListener("click", () => {
    setGuide(false);
    render();
  });
}
