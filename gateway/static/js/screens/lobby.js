// The lobby: the share and watch links, who sits at the table, the deal and the rules; the host's
// form (roles, house rules, durations, the preset, the table's size for seed 004).
import { t, language } from "../i18n.js";
import { el, rebuild } from "../dom.js";
import { toast } from "../toast.js";
import { LOBBY_NEWS } from "../eventlines.js";
import { renderLobbyTable } from "../lobbytable.js";
import * as mod from "../moderation.js";
import { botMark, lobbyBots, removeBotButton } from "../bots.js";
import * as pass from "../pass.js";
import qrcode from "../../vendor/qrcode.mjs";
import { $, app, render, send, showScreen, nameOf, roleName, isHost, feedText, connDot, roleChips, shownRules, ruleValue,
  durationLabel, toolsContext, wolvesDealt, shownDurations } from "../app.js";

export const LOBBY_NEWS_LIMIT = 4;

export function shareLink(room) {
  return `${location.origin}${location.pathname}#/r/${room}`;
}

export function watchLink(room) {
  return `${location.origin}${location.pathname}#/w/${room}`;
}

export function renderLobby(v) {
  showScreen("screen-lobby");
  document.body.dataset.phase = "lobby";
  $("#lobby-title").textContent = t("lobby.title", { room: v.room });
  // One phone passed around: nobody to share the link with (but the players online of a table
  // with seats on one phone); the players and rules are for the table.
  const online = !!app.pass && (pass.withOnline(app.pass, v) || pass.invitesOnline(v.room));
  $("#lobby-share").hidden = !!app.pass && !online;
  const mixed = v.phone && v.players.some((p) => !p.phone);
  $("#lobby-phone").hidden = !v.phone;
  $("#lobby-phone").textContent = v.phone ? t(mixed ? "pass.lobby.hybrid" : "pass.lobby.phone") : "";
  // The host seats players who share this phone (RULES.md "One phone + online").
  $("#phone-seats").hidden = !isHost(v) || v.public || app.watching;
  const link = shareLink(v.room);
  $("#share-link").value = link;
  if (app.qrFor !== `${link}|${language()}`) {
    app.qrFor = `${link}|${language()}`;
    const qr = qrcode(0, "M");
    qr.addData(link);
    qr.make();
    $("#qr").innerHTML = qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true, title: t("lobby.qr") });
  }

  $("#watch-link").value = watchLink(v.room);
  $("#lobby-watch").hidden = !!app.pass || v.settings?.rules?.spectators === "forbidden";
  $("#lobby-spectators").textContent = t("watch.count", { n: v.spectators ?? 0 });
  $("#lobby-players-title").textContent = t("lobby.players", { n: v.players.length });
  const tools = toolsContext(v, true);
  const bots = { v, host: isHost(v), local: !!app.pass, send: (frame) => send(frame) };
  rebuild($("#lobby-players"), v.players.map((p) =>
    el("li", { "data-seat": p.seat, class: "player", "data-away": p.away ? "1" : null, "data-bot": p.bot ? "1" : null },
      p.bot ? null : connDot(p.connected),
      el("span", { class: "name", text: p.name }),
      p.bot ? botMark() : null,
      mixed && p.phone ? el("span", { class: "badge", "data-phone": "1", text: t("lobby.on_phone") }) : null,
      removeBotButton(p, bots),
      p.seat === v.host ? el("span", { class: "badge", text: t("lobby.host") }) : null,
      p.seat === app.here.seat && !app.pass ? el("span", { class: "muted", text: `(${t("lobby.you")})` }) : null,
      tools && !p.bot ? mod.playerTools(p, tools) : null)));
  lobbyBots($("#lobby-bots"), bots);
  rebuild($("#lobby-news"), app.here.feed.filter((ev) => LOBBY_NEWS.has(ev.kind)).slice(-LOBBY_NEWS_LIMIT)
    .map((ev) => el("li", { "data-kind": ev.kind, "data-seq": ev.seq, text: feedText(ev) })));
  $("#leave").hidden = app.here.seat == null || !!app.pass;

  // The server shows the deal of the smallest table the settings can start while fewer are seated.
  const rip = v.roles_in_play || {};
  const min = Object.values(rip).reduce((a, b) => a + b, 0);
  const need = v.players.length < min;
  $("#lobby-need").textContent = need
    ? t("lobby.need", { n: v.players.length, min })
    : isHost(v) ? "" : t("lobby.wait_host", { name: nameOf(v.host) });

  $("#lobby-wolves").textContent = t("lobby.wolves", { n: wolvesDealt(rip) });
  rebuild($("#lobby-roles"), roleChips(rip));
  const preset = v.settings?.preset;
  $("#lobby-preset").dataset.preset = preset || "";
  $("#lobby-preset").textContent = t("lobby.preset", { name: preset ? t(`preset.${preset}`) : t("lobby.preset.custom") });
  rebuild($("#lobby-rules"), shownRules(v).flatMap((r) =>
    [el("dt", { "data-key": r.id, text: t(`rule.${r.id}`) }), el("dd", { text: ruleValue(r.id, v.settings.rules[r.id]) })]));
  const durations = v.settings?.durations || {};
  rebuild($("#lobby-durations"), shownDurations(v).flatMap((k) =>
    [el("dt", { "data-key": k, text: durationLabel(k) }), el("dd", { text: String(durations[k]) })]));

  if (app.watching) $("#lobby-need").textContent = t("watch.lobby");
  const hostForm = $("#lobby-host");
  hostForm.hidden = !isHost(v);
  if (isHost(v)) renderHostForm(v, need);
  renderLobbyTable(v, { host: isHost(v), need, watching: app.watching, local: !!app.pass });
}

// Inputs are rebuilt only when the set of settings changes, and the server's values never
// overwrite a field being edited, nor any field while the host's own change is on its way: the
// ack can arrive before the event that carries the new settings, so the form waits for a view
// that shows what the host sent (or for an error) before it takes the server's values again.
export function renderHostForm(v, need) {
  const chosen = new Set(dealtRoles(v));
  const roles = (app.declared?.roles || []).map((r) => r.id);
  const durations = v.settings?.durations || {};
  const shownKeys = shownDurations(v);
  const rules = shownRules(v, true);
  const shape = `${roles.join()}|${rules.map((r) => r.id).join()}|${shownKeys.join()}|${language()}`;
  const rolesBox = $("#host-roles");
  const rulesBox = $("#host-rules");
  const durBox = $("#host-durations");
  const presetBox = $("#host-preset");
  if (app.hostShape !== shape) {
    // A role dealt brings its rules into the form: the rebuilt form keeps what the host has
    // entered (his change may still be on its way, and the next one reads the form).
    const kept = app.hostShape && rolesBox.childElementCount ? {
      roles: new Set([...rolesBox.querySelectorAll("input:checked")].map((b) => b.value)),
      rules: Object.fromEntries([...rulesBox.querySelectorAll("select")].map((s) => [s.name, s.value])),
      durations: Object.fromEntries([...durBox.querySelectorAll("input")].map((i) => [i.name, i.value])),
      edited: new Set([...durBox.querySelectorAll("input[data-dirty]")].map((i) => i.name)),
    } : null;
    app.hostShape = shape;
    presetBox.replaceChildren(el("option", { value: "", text: t("lobby.preset.custom") }),
      ...(app.declared?.presets || []).map((p) => el("option", { value: p.id, text: t(`preset.${p.id}`) })));
    presetBox.onchange = () => presetBox.value && sendSettings({ preset: presetBox.value });
    rulesBox.replaceChildren(...rules.map((r) =>
      el("label", {},
        el("span", { text: t(`rule.${r.id}`) }),
        el("select", { name: r.id, onchange: () => sendSettings() },
          ...r.values.map((value, i) => el("option", { value: i, class: value === r.default ? "default" : null,
            text: value === r.default ? t("lobby.default", { value: ruleValue(r.id, value) }) : ruleValue(r.id, value) }))))));
    rolesBox.replaceChildren(...roles.map((role) =>
      el("label", { class: "check" },
        el("input", { type: "checkbox", name: "role", value: role, onchange: () => sendSettings() }),
        el("span", { text: `${roleName(role)}: ${t(`explain.${role}`)}` }))));
    durBox.replaceChildren(...shownKeys.map((k) =>
      el("label", {},
        el("span", { text: durationLabel(k) }),
        el("input", { type: "number", name: k, min: 1, inputmode: "numeric", onchange: () => sendSettings(),
          oninput: (e) => (e.target.dataset.dirty = "1") }))));
    if (kept) {
      for (const box of rolesBox.querySelectorAll("input")) box.checked = kept.roles.has(box.value);
      for (const select of rulesBox.querySelectorAll("select")) {
        const rule = rules.find((r) => r.id === select.name);
        select.value = kept.rules[select.name] ?? String(rule.values.indexOf(v.settings.rules[select.name]));
      }
      for (const input of durBox.querySelectorAll("input")) {
        input.value = kept.durations[input.name] || durations[input.name];
        // still the host's, not yet sent: the server's value must not overwrite it below
        if (kept.edited.has(input.name)) input.dataset.dirty = "1";
      }
    }
  }
  if (app.settingsSent && showsSettings(v.settings, app.settingsSent)) app.settingsSent = null;
  if (!app.settingsPending && !app.settingsSent) {
    for (const box of rolesBox.querySelectorAll("input")) box.checked = chosen.has(box.value);
    presetBox.value = v.settings?.preset || "";
    for (const select of rulesBox.querySelectorAll("select")) {
      const rule = rules.find((r) => r.id === select.name);
      select.value = String(rule.values.indexOf(v.settings.rules[select.name]));
    }
    for (const input of durBox.querySelectorAll("input")) {
      if (document.activeElement !== input && !input.dataset.dirty) input.value = durations[input.name];
    }
  }
  renderSizePicker(v);
  $("#start").disabled = need;
}

// The special roles the table deals at its size: the form's ticks (a preset dealing by size, 004,
// ticks its row for the table seated, not every role it may hold).
function dealtRoles(v) {
  const rip = v.roles_in_play || {};
  return (app.declared?.roles || []).map((r) => r.id).filter((r) => rip[r] > 0);
}

// A preset whose roles follow the table's size (004): the host picks the size first and sees
// the deal the code makes for it; the room deals that row for the players seated.
export function renderSizePicker(v) {
  const preset = (app.declared?.presets || []).find((p) => p.id === v.settings?.preset && p.by_size);
  $("#host-size-box").hidden = !preset;
  if (!preset) return;
  const box = $("#host-size");
  const sizes = Object.keys(preset.by_size);
  if (box.dataset.preset !== preset.id) {
    box.dataset.preset = preset.id;
    delete box.dataset.picked;
    box.replaceChildren(...sizes.map((n) => el("option", { value: n, text: String(n) })));
    box.onchange = () => {
      box.dataset.picked = "1";
      rebuild($("#host-size-deal"), roleChips(preset.by_size[box.value]));
    };
  }
  // The table as seated, as players arrive, until the host looks at another size.
  if (!box.dataset.picked) box.value = String(Math.min(Math.max(v.players.length, Number(sizes[0])), Number(sizes.at(-1))));
  rebuild($("#host-size-deal"), roleChips(preset.by_size[box.value]));
}

// `preset` alone picks a preset; otherwise the form's roles, rules and durations are sent.
export function sendSettings(preset = null) {
  let sent = preset;
  if (!sent) {
    const roles = [...document.querySelectorAll("#host-roles input:checked")].map((b) => b.value);
    const durations = {};
    for (const input of document.querySelectorAll("#host-durations input")) {
      durations[input.name] = Number(input.value);
      delete input.dataset.dirty;
    }
    const rules = {};
    for (const select of document.querySelectorAll("#host-rules select")) {
      const rule = app.declared.rules.find((r) => r.id === select.name);
      rules[select.name] = rule.values[Number(select.value)];
    }
    const v = app.here.view;
    // Ticks and rules as dealt: the settings' own roles go back, so a preset dealing by size
    // keeps dealing by size. Changed: the ticked roles, only those, are the table's from now on
    // (a Lover ticked at six seats adds the Lover to the six-seat row, nothing of larger tables).
    const dealt = dealtRoles(v);
    const unchanged = roles.length === dealt.length && roles.every((r) => dealt.includes(r))
      && Object.entries(rules).every(([k, value]) => v.settings?.rules?.[k] === value);
    // a public table keeps its preset: only its durations may change
    sent = v?.public ? { durations } : { roles: unchanged ? [...(v.settings?.roles || [])] : roles, durations, rules };
  }
  app.settingsPending += 1;
  app.settingsSent = sent;
  send({ type: "settings", ...sent }).catch(() => {
    // Refused: the form shows the server's settings again, unless a newer change is on its way.
    if (app.settingsSent === sent) app.settingsSent = null;
  }).finally(() => {
    app.settingsPending -= 1;
    render();
  });
}

export function showsSettings(settings, sent) {
  if (sent.preset) return settings?.preset === sent.preset;
  const roles = new Set(settings?.roles || []);
  const durations = settings?.durations || {};
  return (!sent.roles || (roles.size === sent.roles.length && sent.roles.every((r) => roles.has(r))))
    && Object.entries(sent.durations).every(([k, s]) => durations[k] === s)
    && Object.entries(sent.rules || {}).every(([k, value]) => settings?.rules?.[k] === value);
}

export function bind() {
  $("#copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("#share-link").value);
      toast(t("lobby.copied"));
    } catch {
      $("#share-link").select();
    }
  });
  $("#start").addEventListener("click", () => send({ type: "start" }));
}
