// The table's sounds, synthesized with the Web Audio API (no audio files): your turn, the dawn, a
// vote. Off until the player turns them on (the topbar's toggle, remembered: a room of phones
// chiming at once is no one's wish), and silent until the page's first tap or key: browsers
// refuse audio before a gesture.
const SOUND_KEY = "ww:sound"; // "1": on
const isNight = (phase) => String(phase).startsWith("night.");

// Each cue's notes: [frequency in Hz, start s, length s, waveform].
export const CUES = {
  turn: [[660, 0, 0.3, "sine"], [880, 0.18, 0.32, "sine"]],
  dawn: [[392, 0, 0.6, "sine"], [494, 0.14, 0.6, "sine"], [587, 0.28, 0.7, "sine"], [784, 0.42, 1.0, "sine"]],
  vote: [[196, 0, 0.14, "triangle"], [147, 0.07, 0.18, "triangle"]],
};
const PEAK = 0.22;

export class Sound {
  constructor() {
    this.on = localStorage.getItem(SOUND_KEY) === "1";
    this.audio = null;
    const unlock = () => {
      document.removeEventListener("pointerdown", unlock, true);
      document.removeEventListener("keydown", unlock, true);
      this.unlock();
    };
    document.addEventListener("pointerdown", unlock, true);
    document.addEventListener("keydown", unlock, true);
  }

  // Inside a gesture's handler, the one moment a page may start its audio.
  unlock() {
    try {
      this.audio ??= new AudioContext();
      if (this.audio.state === "suspended") this.audio.resume();
    } catch {
      this.audio = null; // no audio on this device: the title, the glow and the vibration still tell
    }
  }

  toggle() {
    this.on = !this.on;
    localStorage.setItem(SOUND_KEY, this.on ? "1" : "0");
    if (this.on) this.play("turn"); // what it sounds like
    return this.on;
  }

  // Every live event of the table's stream, with the phase the view had before it.
  see(ev, before) {
    if (ev.kind === "voted") this.play("vote");
    else if (ev.kind === "phase" && isNight(before) && !isNight(ev.phase)) this.play("dawn");
  }

  play(cue) {
    if (!this.on || !this.audio) return;
    const now = this.audio.currentTime;
    for (const [freq, at, length, type] of CUES[cue]) {
      const osc = this.audio.createOscillator();
      const gain = this.audio.createGain();
      osc.type = type;
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + at);
      gain.gain.exponentialRampToValueAtTime(PEAK, now + at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + at + length);
      osc.connect(gain).connect(this.audio.destination);
      osc.start(now + at);
      osc.stop(now + at + length + 0.02);
    }
  }
}
