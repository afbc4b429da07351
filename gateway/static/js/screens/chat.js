// The chat: a tab per channel the seat reads; each line with its speaker (the seat's colour, as on
// the table) and its channel's badge, this seat's own lines and the lines naming it set apart; the
// composer where the seat may write (a draft kept per channel, one-tap reactions), or a closed one
// that says in words why it may not. The lines of muted players are left out.
import { t, has } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { toast } from "../toast.js";
import { initial } from "../table.js";
import * as mod from "../moderation.js";
import { botMark, botSeats } from "../bots.js";
import { bindClaims, renderClaims } from "../quickclaims.js";
import { $, app, render, scheduleRender, send, phaseKey } from "../app.js";

// Plain-font marks (no emoji font is assumed for the page's own signs, as on the table).
const CHANNEL_MARK = { day: "☀", wolves: "☾", dead: "✝" };
// A reaction is an ordinary chat line (the channel rules and the rate limit of a typed one, no
// new frame): emoji read the same in every language, a phrase goes out in the writer's.
const REACTIONS = ["👍", "👎", "😂", "😮", "🤔"];
const PHRASES = ["chat.react.suspicious", "chat.react.agree", "chat.react.not_me"];
// The room's chat limit (protocol.md "Errors", rate_limited): 5 lines at once, then 1 a second.
// Kept here too, so that a burst of taps is held back with a word instead of sent to be refused.
const CHAT_BURST = 5;
const CHAT_RATE = 1;
const bucket = { tokens: CHAT_BURST, at: performance.now() };
// What the page has read: per channel, the time of the newest line shown while the log was in
// view; a line naming this seat after it is news, cued on its tab and on the jump to the chat.
const seen = { room: null, upTo: {} };
let logInView = false;
let slowTimer = null;

export function channelLabel(ch) {
  return has(`chat.channel.${ch}`) ? t(`chat.channel.${ch}`) : ch;
}

// The seat's colour on the table (js/table.js hue): the same name gives the same disc.
function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

// Scripts written without spaces between words: a name there is a word wherever it stands.
const UNSPACED = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Thai}";
const WORD_CHAR = `(?![${UNSPACED}])[\\p{L}\\p{M}\\p{N}_]`;
const mentionCache = new Map();

// `name` as a whole word, in any case, with or without an @ before it.
function mentionPattern(name) {
  if (!mentionCache.has(name)) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    mentionCache.set(name, new RegExp(`(?<!${WORD_CHAR})@?${escaped}(?!${WORD_CHAR})`, "giu"));
  }
  const re = mentionCache.get(name);
  re.lastIndex = 0;
  return re;
}

// This page's seat and its name (none for a spectator).
function myself() {
  const v = app.here?.view;
  const seat = v?.me?.seat ?? app.here?.seat;
  if (seat == null || !v) return null;
  const name = (v.seats || v.players || []).find((s) => s.seat === seat)?.name;
  return name?.trim() ? { seat, name: name.trim() } : null;
}

function mentions(line, me) {
  return !!me && line.seat != null && line.seat !== me.seat && mentionPattern(me.name).test(line.text);
}

// The text with each mention of `me` marked.
function marked(text, me) {
  if (!me) return [text];
  const parts = [];
  let at = 0;
  for (const m of text.matchAll(mentionPattern(me.name))) {
    parts.push(text.slice(at, m.index), el("mark", { text: m[0] }));
    at = m.index + m[0].length;
  }
  parts.push(text.slice(at));
  return parts.filter((p) => p !== "");
}

const ONE_EMOJI = /^\p{Extended_Pictographic}\uFE0F?$/u;

export function chatLine(line) {
  const me = myself();
  // a line without a seat is one the Little Girl overheard: its writer is a letter, never a name
  const overheard = line.seat == null;
  const who = overheard ? t("chat.spied", { letter: line.name }) : line.name;
  const mine = !overheard && me?.seat === line.seat;
  const named = mentions(line, me);
  const classes = ["line", mine && "mine", named && "mention", ONE_EMOJI.test(line.text) && "emoji"];
  const bot = !overheard && botSeats(app.here?.view?.players).has(line.seat);
  return el("li", { class: classes.filter(Boolean).join(" "), "data-channel": line.channel,
    "data-seat": overheard ? null : line.seat, "data-bot": bot ? "1" : null },
    el("span", { class: "channel", "data-channel": line.channel, title: channelLabel(line.channel) },
      el("span", { "aria-hidden": "true", text: CHANNEL_MARK[line.channel] ?? "#" }),
      ` ${has(`chat.badge.${line.channel}`) ? t(`chat.badge.${line.channel}`) : line.channel}`),
    el("span", { class: "speaker", style: overheard ? null : `--hue:${hue(line.name)}` },
      el("span", { class: "disc", "aria-hidden": "true", text: overheard ? line.name : initial(line.name) }),
      el("bdi", { class: "who", text: who }),
      bot ? botMark("mark bot") : null,
      mine ? el("span", { class: "you", text: ` (${t("players.you")})` }) : null,
      ": "),
    el("bdi", { class: "text" }, marked(line.text, named ? me : null)));
}

function newestTs(lines) {
  return lines.reduce((ts, line) => Math.max(ts, line.ts), -Infinity);
}

// Lines naming this seat that it has not seen yet, per channel.
function unseenMentions(chat) {
  const me = myself();
  const counts = {};
  for (const [ch, lines] of Object.entries(chat)) {
    const { shown } = mod.visibleLines(app.room, lines);
    counts[ch] = shown.filter((line) => line.ts > (seen.upTo[ch] ?? -Infinity) && mentions(line, me)).length;
  }
  return counts;
}

export function renderChat(v) {
  const chat = v.chat || {};
  const channels = v.channels || [];
  const writable = channels[0] ?? null;
  const tabs = [...new Set([...channels, ...Object.keys(chat)])];
  // Show where the seat writes now (night falls, day breaks, the seat dies) unless the reader
  // picked a tab; a seat with nowhere to write follows the newest line.
  const newest = Object.values(chat).flat().reduce((a, b) => (b.ts >= (a?.ts ?? -Infinity) ? b : a), null);
  if (!app.chatPinned) app.chatTab = writable ?? newest?.channel ?? app.chatTab;
  if (!tabs.includes(app.chatTab)) app.chatTab = tabs[0] ?? null;
  if (seen.room !== app.room) { // what the room said before this page came is no news
    seen.room = app.room;
    seen.upTo = Object.fromEntries(Object.entries(chat).map(([ch, lines]) => [ch, newestTs(lines)]));
  }
  if (logInView && document.visibilityState === "visible" && app.chatTab) {
    seen.upTo[app.chatTab] = Math.max(seen.upTo[app.chatTab] ?? -Infinity, newestTs(chat[app.chatTab] || []));
  }
  const unseen = unseenMentions(chat);
  rebuild($("#chat-tabs"), tabs.map((ch) => el("button", {
    type: "button", class: "tab", "data-channel": ch, "data-fk": `tab:${ch}`,
    "aria-pressed": ch === app.chatTab ? "true" : "false", "data-mentions": unseen[ch] || null,
    onclick: () => { app.chatTab = ch; app.chatPinned = true; render(); },
  }, el("span", { class: "mark", "aria-hidden": "true", text: CHANNEL_MARK[ch] ?? "#" }), ` ${channelLabel(ch)}`,
  el("span", { class: "count", text: ` ${mod.visibleLines(app.room, chat[ch] || []).shown.length}` }),
  unseen[ch] ? el("span", { class: "mentions", text: ` @${unseen[ch]}`, title: t("chat.mentioned", { n: unseen[ch] }) }) : null)));
  cueMentions(Object.values(unseen).reduce((a, b) => a + b, 0));
  // a muted player's lines stay in the view (and the review): this page does not show them
  const { shown: lines, hidden } = mod.visibleLines(app.room, chat[app.chatTab] || []);
  const log = $("#chat-log");
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  rebuild(log, [...(lines.length || hidden ? lines.map(chatLine) : [el("li", { class: "muted", text: t("chat.empty") })]),
    mod.hiddenNote(hidden)].filter(Boolean));
  if (atBottom) log.scrollTop = log.scrollHeight;
  renderComposer(writable, whyClosed(v, app.chatTab, writable));
}

// The jump to the chat (in the phase bar) counts the mentions not seen yet.
function cueMentions(n) {
  const jump = $("#chat-jump");
  if (n) {
    jump.dataset.mentions = String(n);
    jump.setAttribute("aria-label", `${t("chat.jump")} ${t("chat.mentioned", { n })}`);
  } else if (jump.dataset.mentions) {
    delete jump.dataset.mentions;
    jump.removeAttribute("aria-label");
  }
}

// Why this seat may not write under the tab it reads, from what the view holds (`writable`: the
// server's choice of channel, protocol.md "Client frames"), or null where it may.
export function whyClosed(v, tab, writable) {
  if (!v.me) return "spectator";
  if (v.status !== "running" || !v.phase) return "not_started";
  if (writable != null && tab === writable) return null;
  if (!v.me.alive) return "dead";
  const night = String(v.phase).startsWith("night.");
  if (tab === "wolves") return night ? "pack_only" : "pack_by_day";
  if (tab === "day" || tab == null) return !night ? "closed" : writable === "wolves" ? "village_asleep" : "night";
  return "closed";
}

function tokensAt(now) {
  return Math.min(CHAT_BURST, bucket.tokens + ((now - bucket.at) / 1000) * CHAT_RATE);
}

// Seconds until the chat limit lets a line go (0: now).
function slowFor(now = performance.now()) {
  const tokens = tokensAt(now);
  return tokens >= 1 ? 0 : (1 - tokens) / CHAT_RATE;
}

function takeToken() {
  const now = performance.now();
  if (slowFor(now) > 0) return false;
  bucket.tokens = tokensAt(now) - 1;
  bucket.at = now;
  return true;
}

// The room refused a line as too fast (another tab of this seat wrote too): its bucket is empty.
function refusedAsTooFast() {
  bucket.tokens = 0;
  bucket.at = performance.now();
}

// The composer is there only where the seat may write, names that channel, and shows under that
// channel's own lines; elsewhere a closed composer says why, with a button to where it may write.
export function renderComposer(channel, why) {
  const input = $("#chat-input");
  if (app.composerChannel !== channel) {
    // A draft belongs to the channel it was typed for: set aside, never carried into another one.
    const was = app.composerChannel;
    if (was && input.value.trim()) {
      app.drafts[was] = input.value;
      toast(t("chat.draft_aside", { channel: channelLabel(was) }));
    }
    input.value = app.drafts[channel] ?? "";
    delete app.drafts[channel];
    app.composerChannel = channel;
  }
  const open = why == null;
  const form = $("#chat-form");
  form.hidden = !open;
  form.dataset.channel = channel ?? "";
  $("#chat-to").textContent = channel ? t("chat.write_to", { channel: channelLabel(channel) }) : "";
  const elsewhere = !open && channel != null;
  const goto = $("#chat-goto");
  goto.hidden = !elsewhere;
  goto.textContent = elsewhere ? t("chat.goto", { channel: channelLabel(channel) }) : "";
  const closed = $("#chat-closed");
  closed.hidden = open;
  closed.querySelector("input").placeholder = t("chat.readonly");
  closed.querySelector("button").textContent = t("chat.send");
  // Open but too fast: the line typed stays, the buttons wait for the limit, which is said.
  const wait = open ? slowFor() : 0;
  const reason = open ? (wait > 0 ? t("chat.why.slow", { s: Math.ceil(wait) }) : null) : t(`chat.why.${why}`);
  const box = $("#chat-readonly");
  box.hidden = reason == null;
  box.dataset.why = open ? (wait > 0 ? "slow" : "") : why;
  if (reason != null && box.textContent !== reason) box.textContent = reason;
  form.querySelector("button[type=submit]").disabled = wait > 0;
  clearTimeout(slowTimer);
  if (wait > 0) slowTimer = setTimeout(render, wait * 1000 + 20);
  const reactions = $("#chat-reactions");
  reactions.setAttribute("aria-label", t("chat.reactions"));
  renderClaims(wait > 0);
  rebuild(reactions, [
    ...REACTIONS.map((emoji) => el("button", { type: "button", class: "react", "data-react": emoji,
      "data-fk": `react:${emoji}`, disabled: wait > 0, text: emoji })),
    ...PHRASES.map((key) => el("button", { type: "button", class: "react phrase", "data-react": key,
      "data-fk": `react:${key}`, disabled: wait > 0, text: t(key) }))]);
}

// Sends one line to the channel the composer shows; resolves true once the room took it.
function write(text) {
  const channel = app.composerChannel;
  if (!text || !channel) return Promise.resolve(false);
  if (!takeToken()) { // held back here: the composer says when to try again
    render();
    return Promise.resolve(false);
  }
  const writtenIn = phaseKey(app.here.view);
  // The line names the channel the composer showed: the server refuses it if the phase has moved
  // it to another one meanwhile, and a line still waiting for a welcome dies with its phase.
  return send({ type: "chat", text, channel }, {
    expired: (welcome) => phaseKey(welcome.view) !== writtenIn,
    explain: (err) => {
      if (err.code === "rate_limited") {
        refusedAsTooFast();
        scheduleRender();
        return ""; // the composer says it
      }
      return err.code === "expired" ? t("chat.expired", { text })
        : err.code === "not_your_turn" ? t("chat.moved_on")
        : err.code === "bad_frame" ? t("chat.bad_line") : null;
    },
  }).then(() => {
    // The composer may have moved to another channel since: clear the line where it now is.
    const input = $("#chat-input");
    if (app.composerChannel === channel && input.value.trim() === text) input.value = "";
    else if (app.drafts[channel]?.trim() === text) delete app.drafts[channel];
    return true;
  }, () => false);
}

export function bind() {
  // Where the seat may not write: the composer shown closed, its reason in #chat-readonly.
  $("#chat-readonly").after(el("div", { id: "chat-closed", class: "chatform closed", hidden: true },
    el("input", { id: "chat-closed-input", disabled: true, "aria-labelledby": "chat-title", "aria-describedby": "chat-readonly" }),
    el("button", { type: "button", disabled: true })));
  $("#chat-readonly").setAttribute("aria-live", "polite");
  const reactions = el("div", { id: "chat-reactions", class: "reactions", role: "group" });
  $("#chat-form").append(reactions);
  reactions.addEventListener("click", (e) => {
    const key = e.target.closest("button[data-react]")?.dataset.react;
    if (key) write(key.startsWith("chat.") ? t(key) : key);
  });
  bindClaims(write);
  $("#chat-goto").addEventListener("click", () => {
    app.chatTab = app.composerChannel;
    app.chatPinned = false;
    render();
    $("#chat-input").focus();
  });
  $("#chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    write($("#chat-input").value.trim());
  });
  // The log on screen, in a page on screen: what it shows is read. A late callback (a busy page)
  // gets several records in time order: the last says where the log is now (the first may say
  // "gone" of a log back in view, whose mentions then stay unseen).
  new IntersectionObserver((entries) => {
    logInView = entries.at(-1).isIntersecting;
    scheduleRender();
  }).observe($("#chat-log"));
  document.addEventListener("visibilitychange", scheduleRender);
}
