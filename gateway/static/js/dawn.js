// The dawn: when a night ends, a banner names who died in it (with their cards, which death
// reveals), or says that nobody did. Every tap goes through it to the control under it (it has
// no button of its own: one would block what lies under it) and puts it away; else it goes by
// itself, and with the game's end. `held()` true (a phone passed around, still going round the
// night): it waits, and `release()` shows it; `shown(day)` is told each dawn shown.
import { el, rebuild } from "./dom.js";
import { rolePicture } from "./art.js";
import { t, has } from "./i18n.js";

const SHOWN_MS = 7000;
const isNight = (phase) => String(phase).startsWith("night.");

// A cause of "night" (a table that hides how its night deaths came) says no more than the line's
// own "in the night": the line goes without it.
function diedText(d, { nameOf, roleName }) {
  const vars = { name: nameOf(d.seat), role: roleName(d.role) };
  if (d.cause === "night") return t("dawn.died_night", vars);
  return t("dawn.died", { ...vars, cause: has(`cause.${d.cause}`) ? t(`cause.${d.cause}`) : d.cause });
}

export class Dawn {
  // `shown(day)`: told each time a dawn shows (the phone starts the day's clock, the narrator
  // speaks it).
  constructor({ nameOf, roleName, held = () => false, shown = () => {} }) {
    Object.assign(this, { nameOf, roleName, held, shown, deaths: [], timer: null, waiting: null });
    // Capture: the tap still reaches its control; the banner only goes.
    document.addEventListener("pointerdown", () => this.close(), { capture: true, passive: true });
    document.addEventListener("keydown", (e) => e.key === "Escape" && this.close());
  }

  // Every live event, with the phase the view had before it.
  see(ev, before) {
    if (ev.kind === "phase") {
      if (isNight(ev.phase) && !isNight(before)) this.deaths = [];
      else if (!isNight(ev.phase) && isNight(before)) this.show(ev.day);
    } else if (ev.kind === "game_over" || ev.kind === "closed") {
      this.waiting = null;
      this.close();
    } else if (ev.kind === "death" && isNight(before)) {
      this.deaths.push(ev);
    }
  }

  show(day) {
    if (this.held()) {
      this.waiting = day;
      return;
    }
    this.waiting = null;
    const box = document.querySelector("#dawn");
    document.querySelector("#dawn-title").textContent = t("dawn.title", { n: day });
    rebuild(document.querySelector("#dawn-dead"), this.deaths.length
      ? this.deaths.map((d) => el("li", { class: "dawn-death", "data-seat": d.seat },
        rolePicture(d.role, { className: "dawn-art" }),
        el("span", { text: diedText(d, this) })))
      : [el("li", { class: "dawn-none", text: t("dawn.nobody") })]);
    box.hidden = false;
    document.body.dataset.dawn = "1";
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.close(), SHOWN_MS);
    this.shown(day);
  }

  release() {
    if (this.waiting != null && !this.held()) this.show(this.waiting);
  }

  close() {
    clearTimeout(this.timer);
    const box = document.querySelector("#dawn");
    if (box.hidden) return;
    box.hidden = true;
    document.body.dataset.dawn = "0";
  }
}
