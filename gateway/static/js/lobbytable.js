// A lobby's public side: the "public · preset · language" badge, the countdown of a public table
// that starts by itself, and the host's switch to public (the `table` command), locked once public:
// a public table has no host. It keeps its preset: its form shows the durations only, no Start.
import { LANGS, t, language } from "./i18n.js";
import { el } from "./dom.js";
import { secondsLeft } from "./tables.js";

const $ = (sel) => document.querySelector(sel);
const lobby = { send: null, view: null, pending: false };

// `send(frame, options)`: the page's command sender (toasts a refusal unless `explain` words it).
export function initLobbyTable({ send }) {
  lobby.send = send;
  $("#host-public").addEventListener("change", (e) => sendTable(e.target.checked));
  setInterval(tickCountdown, 250);
}

function sendTable(pub) {
  lobby.pending = true;
  lobby.send({ type: "table", public: pub, language: $("#host-language").value }, {
    explain: (err) => (err.code === "not_your_turn" && pub ? t("lobby.public_needs_preset") : null),
  }).catch(() => {}).finally(() => {
    lobby.pending = false;
    if (lobby.view) showSwitch(lobby.view);
  });
}

// After the lobby's own rendering. `host`: this page holds the host's seat; `need`: too few
// seated to start; `local`: one phone passed around (its table is never listed).
export function renderLobbyTable(v, { host, need, watching, local }) {
  lobby.view = v;
  const badge = $("#lobby-public");
  badge.hidden = !v.public;
  if (v.public) {
    badge.textContent = t("lobby.public_badge", {
      preset: v.settings?.preset ? t(`preset.${v.settings.preset}`) : t("lobby.preset.custom"),
      language: t(`lang.${v.language || "en"}`) });
  }
  const countdown = $("#lobby-countdown");
  countdown.dataset.at = v.public && v.starts_at ? String(v.starts_at) : "";
  tickCountdown();
  // Short of players or not, bots fill it at its countdown.
  if (v.public && !watching) $("#lobby-need").textContent = t("lobby.public_wait");
  $("#host-table").hidden = !host || local;
  if (!host) return;
  showSwitch(v);
  // A public table plays its preset as it is: the durations only, and it starts by itself.
  for (const id of ["#host-preset-box", "#host-roles-box", "#host-rules-box", "#start"]) $(id).hidden = !!v.public;
  $("#host-public-hint").hidden = !v.public;
}

function showSwitch(v) {
  const select = $("#host-language");
  const shape = language();
  if (select.dataset.shape !== shape) {
    select.dataset.shape = shape;
    const value = select.value;
    select.replaceChildren(...LANGS.map((l) => el("option", { value: l, text: t(`lang.${l}`) })));
    select.value = value || language();
  }
  if (lobby.pending) return; // the host's change is on its way: the view catches up
  $("#host-public").checked = !!v.public;
  $("#host-public").disabled = select.disabled = !!v.public;
  if (v.public && v.language && document.activeElement !== select) select.value = v.language;
}

function tickCountdown() {
  const box = $("#lobby-countdown");
  if (!box || $("#screen-lobby").hidden) return;
  const at = Number(box.dataset.at);
  box.hidden = !box.dataset.at;
  const text = box.hidden ? "" : secondsLeft(at) > 0 ? t("lobby.starts_in", { s: secondsLeft(at) }) : t("lobby.starting");
  if (box.textContent !== text) box.textContent = text;
}
