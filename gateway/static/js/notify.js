// "Your turn": a prompt this page has not announced yet is told by the tab title (until it is
// answered or closed), a vibration on phones and, if the player turned it on, a short chime.
const SOUND_KEY = "ww:sound";

export class TurnNotifier {
  constructor(baseTitle) {
    this.baseTitle = baseTitle;
    this.announced = new Set();
    this.sound = localStorage.getItem(SOUND_KEY) === "1"; // off by default
    this.audio = null;
  }

  setBaseTitle(title) {
    this.baseTitle = title;
  }

  toggleSound() {
    this.sound = !this.sound;
    localStorage.setItem(SOUND_KEY, this.sound ? "1" : "0");
    if (this.sound) this.chime(); // also unlocks audio on the click that turned it on
    return this.sound;
  }

  // `open`: keys of the prompts waiting for this seat's answer; `turnTitle` the title to show.
  update(open, turnTitle) {
    const fresh = open.filter((key) => !this.announced.has(key));
    for (const key of fresh) this.announced.add(key);
    if (fresh.length) {
      navigator.vibrate?.([180, 80, 180]);
      if (this.sound) this.chime();
    }
    const title = open.length ? `● ${turnTitle} · ${this.baseTitle}` : this.baseTitle;
    if (document.title !== title) document.title = title;
    document.body.dataset.turn = open.length ? "1" : "0";
  }

  chime() {
    try {
      this.audio ??= new AudioContext();
      const now = this.audio.currentTime;
      for (const [i, freq] of [660, 880].entries()) {
        const osc = this.audio.createOscillator();
        const gain = this.audio.createGain();
        osc.frequency.value = freq;
        gain.gain.setValueAtTime(0.0001, now + i * 0.18);
        gain.gain.exponentialRampToValueAtTime(0.25, now + i * 0.18 + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.18 + 0.3);
        osc.connect(gain).connect(this.audio.destination);
        osc.start(now + i * 0.18);
        osc.stop(now + i * 0.18 + 0.32);
      }
    } catch {
      // no audio on this device: the title and the vibration still tell
    }
  }
}
