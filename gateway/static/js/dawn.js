// The dawn: when a night ends, a banner names who died in it (with their cards, which death
// reveals), or says that nobody did. It lets clicks through, and goes by itself.
import { el, rebuild } from "./dom.js";
import { rolePicture } from "./art.js";
import { t, has } from "./i18n.js";

const SHOWN_MS = 7000;
const isNight = (phase) => String(phase).startsWith("night.");

export class Dawn {
  constructor({ nameOf, roleName }) {
    Object.assign(this, { nameOf, roleName, deaths: [], timer: null });
  }

  // Every live event, with the phase the view had before it.
  see(ev, before) {
    if (ev.kind === "phase") {
      if (isNight(ev.phase) && !isNight(before)) this.deaths = [];
      else if (!isNight(ev.phase) && isNight(before)) this.show(ev.day);
    } else if (ev.kind === "death" && isNight(before)) {
      this.deaths.push(ev);
    }
  }

  show(day) {
    const box = document.querySelector("#dawn");
    document.querySelector("#dawn-title").textContent = t("dawn.title", { n: day });
    rebuild(document.querySelector("#dawn-dead"), this.deaths.length
      ? this.deaths.map((d) => el("li", { class: "dawn-death", "data-seat": d.seat },
        rolePicture(d.role, { className: "dawn-art" }),
        el("span", { text: t("dawn.died", { name: this.nameOf(d.seat), role: this.roleName(d.role),
          cause: has(`cause.${d.cause}`) ? t(`cause.${d.cause}`) : d.cause }) })))
      : [el("li", { class: "dawn-none", text: t("dawn.nobody") })]);
    box.hidden = false;
    document.body.dataset.dawn = "1";
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.close(), SHOWN_MS);
  }

  close() {
    clearTimeout(this.timer);
    document.querySelector("#dawn").hidden = true;
    document.body.dataset.dawn = "0";
  }
}
