// The narrator (issue 35): a device at a table that plays face to face speaks the game master's
// lines with the browser's speech synthesis, in the page's language: night falls, each night step
// wakes its card and puts it back to sleep, the dawn names the dead, the day's phases, the end.
// It speaks only the table's public stream (the phases, the deaths as the dawn shows them, the
// end), so it says nothing a game master would keep secret: a step is called whatever its card's
// fate, as the phase itself is. Off unless turned on (remembered); browsers speak only after a
// gesture on the page, and the toggle is one. With it, an optional quiet night ambience.
import { t, has, language } from "./i18n.js";

const ON_KEY = "ww:narrator"; // "1": on
const AMBIENCE_KEY = "ww:ambience"; // "1": on (while the narrator is)
const AMBIENCE_PEAK = 0.05; // under the narrator's voice
const AMBIENCE_FADE = 1.5; // s
const VOICE_LANG = { en: "en-US", ar: "ar-SA", zh: "zh-CN", vi: "vi-VN" };
const isNight = (phase) => String(phase).startsWith("night.");
const spoken = (text) => text.replace(/[\u2066-\u2069]/g, ""); // bidi isolates are not words

// A quiet night: soft wind (brown noise under a low-pass filter, made here, no audio file) from
// nightfall to the dawn. Every night sounds the same whatever its steps, so it tells nothing.
class Ambience {
  constructor(audio) {
    this.audio = audio; // the page's AudioContext once a gesture made one (sound.js), else null
    this.source = null;
  }

  start() {
    const ctx = this.audio();
    if (this.source || !ctx) return;
    const buffer = ctx.createBuffer(1, ctx.sampleRate * 4, ctx.sampleRate);
    const samples = buffer.getChannelData(0);
    let last = 0;
    for (let i = 0; i < samples.length; i++) {
      last = (last + 0.02 * (Math.random() * 2 - 1)) / 1.02;
      samples[i] = last * 3.5;
    }
    const source = ctx.createBufferSource();
    source.buffer = buffer;
    source.loop = true;
    const filter = ctx.createBiquadFilter();
    filter.type = "lowpass";
    filter.frequency.value = 500;
    this.gain = ctx.createGain();
    this.gain.gain.setValueAtTime(0.0001, ctx.currentTime);
    this.gain.gain.exponentialRampToValueAtTime(AMBIENCE_PEAK, ctx.currentTime + 3);
    source.connect(filter).connect(this.gain).connect(ctx.destination);
    source.start();
    this.source = source;
  }

  stop() {
    if (!this.source) return;
    const now = this.source.context.currentTime;
    this.gain.gain.cancelScheduledValues(now);
    this.gain.gain.setValueAtTime(Math.max(this.gain.gain.value, 0.0001), now);
    this.gain.gain.exponentialRampToValueAtTime(0.0001, now + AMBIENCE_FADE);
    this.source.stop(now + AMBIENCE_FADE);
    this.source = null;
  }
}

export class Narrator {
  constructor({ nameOf, roleName, speech = globalThis.speechSynthesis, audio = () => null }) {
    Object.assign(this, { nameOf, roleName, speech, nightDeaths: [], dayAfterDawn: null });
    this.on = localStorage.getItem(ON_KEY) === "1";
    this.ambienceOn = localStorage.getItem(AMBIENCE_KEY) === "1";
    this.ambience = new Ambience(audio);
    this.night = false; // from nightfall to the dawn shown
  }

  toggle() {
    this.on = !this.on;
    localStorage.setItem(ON_KEY, this.on ? "1" : "0");
    if (!this.on) this.speech?.cancel();
    this.ambienceNow();
    return this.on;
  }

  toggleAmbience() {
    this.ambienceOn = !this.ambienceOn;
    localStorage.setItem(AMBIENCE_KEY, this.ambienceOn ? "1" : "0");
    this.ambienceNow();
    return this.ambienceOn;
  }

  ambienceNow() {
    if (this.on && this.ambienceOn && this.night) this.ambience.start();
    else this.ambience.stop();
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
          this.night = true;
          this.ambienceNow();
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
      this.night = false;
      this.ambienceNow();
      this.say(t("event.game_over"));
      this.say(winners.length ? t("end.winners", { names: winners.map(this.nameOf).join(", ") })
        : t("end.no_winner"));
    }
  }

  // The dawn as the table sees it (js/dawn.js: on a phone passed around, once the round is done).
  dawnShown(day) {
    this.night = false;
    this.ambienceNow();
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
