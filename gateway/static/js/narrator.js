// The narrator (issue 35): a device at a table that plays face to face speaks the game master's
// lines with the browser's speech synthesis, in the page's language: night falls, each night step
// wakes its card and puts it back to sleep, the dawn names the dead, the day's phases, the end.
// It speaks only the table's public stream (the phases, the deaths as the dawn shows them, the
// end), so it says nothing a game master would keep secret: a step is called whatever its card's
// fate, as the phase itself is. Off unless turned on (remembered); browsers speak only after a
// gesture on the page, and the toggle is one.
import { t, has, language } from "./i18n.js";

const ON_KEY = "ww:narrator"; // "1": on
const VOICE_LANG = { en: "en-US", ar: "ar-SA", zh: "zh-CN", vi: "vi-VN" };
const isNight = (phase) => String(phase).startsWith("night.");
const spoken = (text) => text.replace(/[\u2066-\u2069]/g, ""); // bidi isolates are not words

export class Narrator {
  constructor({ nameOf, roleName, speech = globalThis.speechSynthesis }) {
    Object.assign(this, { nameOf, roleName, speech, nightDeaths: [], dayAfterDawn: null });
    this.on = localStorage.getItem(ON_KEY) === "1";
  }

  toggle() {
    this.on = !this.on;
    localStorage.setItem(ON_KEY, this.on ? "1" : "0");
    if (!this.on) this.speech?.cancel();
    return this.on;
  }

  // Who a night step wakes: its card, or the pack.
  who(phase) {
    const step = phase.slice("night.".length);
    if (step === "wolves") return t("narrator.who.wolves");
    return has(`role.${step}`) ? this.roleName(step) : t(`phase.${phase}`);
  }

  // Every live event of the table's public stream, with the phase the view had before it.
  see(ev, before) {
    if (ev.kind === "phase") {
      if (isNight(before)) this.say(t("narrator.sleep", { who: this.who(before) }));
      if (isNight(ev.phase)) {
        if (!isNight(before)) {
          this.nightDeaths = [];
          this.say(t("narrator.night"));
        }
        this.say(t("narrator.wake", { who: this.who(ev.phase) }));
      } else if (isNight(before)) {
        this.dayAfterDawn = ev.phase; // spoken after the dawn's news (dawnShown)
      } else if (has(`phase.${ev.phase}`)) {
        this.say(t(`phase.${ev.phase}`));
      }
    } else if (ev.kind === "death") {
      if (isNight(before)) this.nightDeaths.push(ev);
      else this.say(this.death(ev, "narrator.out"));
    } else if (ev.kind === "game_over") {
      const winners = ev.winners || [];
      this.say(t("event.game_over"));
      this.say(winners.length ? t("end.winners", { names: winners.map(this.nameOf).join(", ") })
        : t("end.no_winner"));
    }
  }

  // The dawn as the table sees it (js/dawn.js: on a phone passed around, once the round is done).
  dawnShown(day) {
    this.say(t("narrator.dawn", { n: day }));
    if (!this.nightDeaths.length) this.say(t("dawn.nobody"));
    for (const ev of this.nightDeaths) this.say(this.death(ev, "narrator.found_dead"));
    this.nightDeaths = [];
    if (this.dayAfterDawn && has(`phase.${this.dayAfterDawn}`)) this.say(t(`phase.${this.dayAfterDawn}`));
    this.dayAfterDawn = null;
  }

  death(ev, key) {
    const name = this.nameOf(ev.seat);
    return ev.role ? t(`${key}_role`, { name, role: this.roleName(ev.role) }) : t(key, { name });
  }

  say(text) {
    if (!this.on || !this.speech) return;
    const utterance = new SpeechSynthesisUtterance(spoken(text));
    utterance.lang = VOICE_LANG[language()] || language();
    const voice = this.speech.getVoices().find((v) => v.lang.startsWith(language()));
    if (voice) utterance.voice = voice;
    this.speech.speak(utterance);
  }
}
