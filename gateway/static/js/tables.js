// The home page's public tables: quick play (a seat at the fullest open table of a preset and
// language, or a new one), the live list of open tables and of running games (GET /api/tables,
// polled while the home screen shows), and the create form's "public table" option.
// It shows only what the list gives: preset, language, seats, size (so how many more start an open
// table at once), countdown, start time.
import { LANGS, t, language } from "./i18n.js";
import { el } from "./dom.js";
import { api, errorText } from "./http.js";
import { toast } from "./toast.js";

export const QUICK_PRESETS = ["seed_000", "seed_002", "seed_004"];
const POLL_MS = 3000;
const PRESS_TRIES = 3; // a press lost on the way is sent again, same id: the same seat comes back

const $ = (sel) => document.querySelector(sel);
const home = { seated: null, presets: [], players: null, press: null, lists: { open: { page: 1 }, running: { page: 1 } }, busy: false };

export const secondsLeft = (at) => Math.max(0, Math.ceil((at - Date.now()) / 1000));
const presetName = (id) => t(`preset.${id}`);
const langName = (lang) => t(`lang.${lang}`);

// `seated(answer)`: what the page does with a seat (keep its token, open the room);
// `presets`: every preset id the rules declare (a host's public table may play any of them);
// `players`: the table sizes the rules play ({min, max}: the declaration's, the widest of the
// presets') and one phone passed around does ({phoneMin, phoneMax}), which the intro tells.
export function initHome({ seated, presets, players }) {
  Object.assign(home, { seated, presets, players });
  const quick = $("#form-quick");
  quick.addEventListener("submit", (e) => {
    e.preventDefault();
    quickPlay(e.submitter || quick.querySelector("button[type=submit]"));
  });
  // Another name, preset or language is another press.
  quick.addEventListener("input", () => (home.press = null));
  for (const id of ["#quick-language", "#create-language"]) $(id).addEventListener("change", (e) => (e.target.dataset.picked = "1"));
  for (const id of ["#tables-preset", "#tables-language"]) {
    $(id).addEventListener("change", () => {
      home.lists.open.page = home.lists.running.page = 1;
      refresh();
    });
  }
  $("#create-public").addEventListener("change", (e) => ($("#create-public-box").hidden = !e.target.checked));
  relabel();
  setInterval(() => { if (showing()) refresh(); }, POLL_MS);
  setInterval(tickStarts, 500);
  document.addEventListener("visibilitychange", () => { if (showing()) refresh(); });
}

function showing() {
  return !$("#screen-home").hidden && document.visibilityState === "visible";
}

// The selects' words in the page's language (their values kept); the quick play's language
// follows the page's until the player picks another.
export function relabel() {
  const fill = (select, options) => {
    const value = select.value;
    select.replaceChildren(...options.map(([v, text]) => el("option", { value: v, text })));
    if (options.some(([v]) => v === value)) select.value = value;
  };
  const { min, max, phoneMin, phoneMax } = home.players;
  $("#home-intro").textContent = t("home.intro", { min, max, phone_min: phoneMin, phone_max: phoneMax });
  const langs = LANGS.map((l) => [l, langName(l)]);
  fill($("#quick-preset"), QUICK_PRESETS.map((p) => [p, presetName(p)]));
  fill($("#quick-language"), langs);
  if (!$("#quick-language").dataset.picked) $("#quick-language").value = language();
  fill($("#create-preset"), home.presets.map((p) => [p, presetName(p)]));
  fill($("#create-language"), langs);
  if (!$("#create-language").dataset.picked) $("#create-language").value = language();
  fill($("#tables-preset"), [["", t("tables.any_preset")], ...home.presets.map((p) => [p, presetName(p)])]);
  fill($("#tables-language"), [["", t("tables.any_language")], ...langs]);
  for (const kind of ["open", "running"]) delete $(`#tables-${kind}`).dataset.sig;
  draw();
}

// The home screen is showing: the lists now, then every few seconds.
export function shown() {
  refresh();
}

// What the create form adds to POST /api/rooms.
export function createOptions() {
  if (!$("#create-public").checked) return {};
  return { public: true, preset: $("#create-preset").value, language: $("#create-language").value };
}

function pressId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function quickPlay(button) {
  const form = $("#form-quick");
  home.press ??= pressId(); // kept until it seats: a retry is the same press
  const body = { name: form.name.value.trim(), preset: form.preset.value, language: form.language.value, press: home.press };
  button.disabled = true;
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const answer = await api("POST", "/api/quickplay", body);
        home.press = null;
        home.seated(answer);
        return;
      } catch (err) {
        const lost = err.code === "network" || err.code === "storage_unavailable";
        if (!lost || attempt >= PRESS_TRIES) throw err;
        await new Promise((done) => setTimeout(done, 1000 * attempt));
      }
    }
  } catch (err) {
    toast(errorText(err));
  } finally {
    button.disabled = false;
  }
}

// A listed table's Join: the name comes from the quick play card.
async function join(room) {
  const input = $("#form-quick input[name=name]");
  const name = input.value.trim();
  if (!name) {
    toast(t("tables.name_first"));
    input.focus();
    return;
  }
  try {
    home.seated(await api("POST", `/api/rooms/${room}/join`, { name }));
  } catch (err) {
    toast(errorText(err));
    refresh();
  }
}

async function refresh() {
  if (home.busy) return;
  home.busy = true;
  const filters = { preset: $("#tables-preset").value, language: $("#tables-language").value };
  try {
    await Promise.all(["open", "running"].map(async (state) => {
      const query = new URLSearchParams({ state, page: String(home.lists[state].page) });
      for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
      const answer = await api("GET", `/api/tables?${query}`);
      home.lists[state] = { ...answer, page: answer.page };
    }));
    $("#tables-status").textContent = "";
  } catch {
    $("#tables-status").textContent = t("tables.unavailable");
  } finally {
    home.busy = false;
  }
  draw();
}

function draw() {
  for (const state of ["open", "running"]) drawList(state, home.lists[state]);
  tickStarts();
}

// Rebuilt only when what the server said changes (the countdowns tick in place), keeping the
// keyboard's place.
function drawList(state, list) {
  const box = $(`#tables-${state}`);
  const tables = list.tables || [];
  const sig = JSON.stringify(tables);
  if (box.dataset.sig !== sig) {
    box.dataset.sig = sig;
    const fk = box.contains(document.activeElement) ? document.activeElement.dataset.fk : null;
    box.replaceChildren(...(tables.length ? tables.map((table) => row(state, table))
      : [el("li", { class: "muted empty", text: t(state === "open" ? "tables.none_open" : "tables.none_running") })]));
    if (fk) box.querySelector(`[data-fk="${CSS.escape(fk)}"]`)?.focus();
  }
  pager(state, list);
}

function row(state, table) {
  const facts = [el("span", { class: "seats", text: t("tables.seats", { n: table.seats, size: table.size }) })];
  // Who sits there: people and bots (a public table fills with bots at its countdown).
  const bots = table.bots || 0;
  facts.push(el("span", { class: "humans", "data-humans": table.seats - bots, "data-bots": bots,
    text: t("tables.humans_bots", { humans: table.seats - bots, bots }) }));
  if (state === "open") {
    // What it waits for: its countdown (then bots fill it), or this many more to start at once.
    const needs = Math.max(0, table.size - table.seats);
    facts.push(el("span", { class: "needs", "data-needs": needs, text: t("tables.needs", { n: needs }) }));
    facts.push(el("span", { class: "starts", "data-at": table.starts_at ?? "" }));
  } else facts.push(el("span", { class: "since", "data-since": table.started ?? "" }));
  return el("li", { class: "tablerow", "data-room": table.room, "data-state": state, "data-preset": table.preset, "data-language": table.language },
    el("div", { class: "what" },
      el("span", { class: "name", text: presetName(table.preset) }),
      el("span", { class: "chip", text: langName(table.language) }),
      el("span", { class: "muted code", dir: "ltr", text: t("tables.code", { room: table.room }) })),
    el("div", { class: "facts muted" }, facts),
    state === "open"
      ? el("button", { type: "button", class: "join", "data-fk": `join:${table.room}`, onclick: () => join(table.room), text: t("tables.join") })
      : el("a", { class: "watch", href: `#/w/${table.room}`, "data-fk": `watch:${table.room}`, text: t("tables.watch") }));
}

function pager(state, list) {
  const box = $(`#tables-${state}-pager`);
  const pages = list.pages || 1;
  box.hidden = pages <= 1;
  if (box.hidden) return;
  const go = (page) => {
    home.lists[state].page = page;
    refresh();
  };
  const page = list.page || 1;
  const shape = `${page}/${pages}|${language()}`;
  if (box.dataset.shape === shape) return;
  box.dataset.shape = shape;
  box.replaceChildren(
    el("button", { type: "button", class: "prev", disabled: page <= 1, onclick: () => go(page - 1), text: t("tables.prev") }),
    el("span", { class: "muted", text: t("tables.page", { page, pages }) }),
    el("button", { type: "button", class: "next", disabled: page >= pages, onclick: () => go(page + 1), text: t("tables.next") }));
}

// The open tables' countdowns and the running games' age, in place.
function tickStarts() {
  if ($("#screen-home").hidden) return;
  for (const span of document.querySelectorAll("#tables-open .starts")) {
    const at = Number(span.dataset.at);
    const text = !span.dataset.at ? t("tables.waiting") : secondsLeft(at) > 0 ? t("tables.starts_in", { s: secondsLeft(at) }) : t("tables.starting");
    if (span.textContent !== text) span.textContent = text;
  }
  for (const span of document.querySelectorAll("#tables-running .since")) {
    const m = Math.floor((Date.now() - Number(span.dataset.since)) / 60000);
    const text = !span.dataset.since || m < 1 ? t("tables.started_now") : t("tables.started_ago", { m });
    if (span.textContent !== text) span.textContent = text;
  }
}
