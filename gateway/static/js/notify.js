// "Your turn": a prompt this page has not announced yet is told by the tab title (until it is
// answered or closed), a vibration on phones and the turn's sound (sound.js).

export class TurnNotifier {
  constructor(baseTitle, sound) {
    this.baseTitle = baseTitle;
    this.announced = new Set();
    this.sound = sound;
  }

  setBaseTitle(title) {
    this.baseTitle = title;
  }

  // `open`: keys of the prompts waiting for this seat's answer; `turnTitle` the title to show.
  // Returns the keys announced now for the first time.
  update(open, turnTitle) {
    const fresh = open.filter((key) => !this.announced.has(key));
    for (const key of fresh) this.announced.add(key);
    if (fresh.length) {
      navigator.vibrate?.([180, 80, 180]);
      this.sound.play("turn");
    }
    const title = open.length ? `● ${turnTitle} · ${this.baseTitle}` : this.baseTitle;
    if (document.title !== title) document.title = title;
    document.body.dataset.turn = open.length ? "1" : "0";
    return fresh;
  }
}
