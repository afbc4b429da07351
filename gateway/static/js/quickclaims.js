// Quick claims (issue 33): one-tap structured lines in the chat ("I am the Seer", "Omar is a
// werewolf", "I vote Omar", "I trust Layla", the pack's "Let's take Omar"), sent as ordinary chat
// lines. Their words are the bots' own: the server's catalogue (GET /api/rules "claims", from
// bots/claims.py), so the bots read a human's claim as they read each other's.
import { language, t } from "./i18n.js";
import { el, rebuild } from "./dom.js";
import { $, app } from "./app.js";

// The kinds a seat may tap, by the channel it writes to: the pack plans its victim too.
const KINDS = { day: ["role", "wolf", "innocent", "vote", "trust"],
  wolves: ["attack", "role", "wolf", "innocent", "vote", "trust"] };
const picked = { kind: null };

// The language the table's bots speak (a public table's), else the page's, else English.
function claimLanguage(catalogue) {
  const v = app.here?.view;
  for (const lang of [v?.language, language(), "en"]) if (lang && catalogue[lang]) return lang;
  return "en";
}

// The line of a claim, exactly as bots/claims.py `render` makes it (seats named by their names).
export function claimText(kind, { seat = null, role = null } = {}) {
  const claims = app.declared?.claims;
  const lang = claimLanguage(claims.catalogue);
  const name = (s) => (s == null ? "" : (app.here.view.seats || []).find((x) => x.seat === s)?.name ?? "");
  return claims.catalogue[lang][kind]
    .replace("{role}", () => claims.role_names[lang][role] ?? "")
    .replace("{seat}", () => name(seat));
}

// A kind's button: its line with the blanks shown as an ellipsis.
function kindLabel(kind) {
  const claims = app.declared.claims;
  return claims.catalogue[claimLanguage(claims.catalogue)][kind].replace(/\{\w+\}/g, "…");
}

// The choices of the kind picked: the cards dealt, or the living seats but this one.
function options(kind, v) {
  if (kind === "role") {
    return Object.entries(v.roles_in_play || {}).filter(([, n]) => n > 0)
      .map(([role]) => ({ text: app.declared.claims.role_names[claimLanguage(app.declared.claims.catalogue)][role] ?? role,
        line: claimText("role", { role }), key: `role:${role}` }));
  }
  return (v.seats || []).filter((s) => s.alive && s.seat !== app.here.seat)
    .map((s) => ({ text: s.name, line: claimText(kind, { seat: s.seat }), key: `${kind}:${s.seat}` }));
}

// Under the composer, where the seat writes by day or with the pack; `slow`: the chat limit holds.
export function renderClaims(slow) {
  const box = $("#chat-claims");
  const v = app.here?.view;
  const kinds = KINDS[app.composerChannel] || [];
  box.hidden = !kinds.length || !app.declared?.claims || !v;
  if (box.hidden) return;
  if (!kinds.includes(picked.kind)) picked.kind = null;
  const chooser = el("div", { class: "claim-kinds", role: "group", "aria-label": t("claims.title") }, kinds.map((kind) =>
    el("button", { type: "button", class: "react claim-kind", "data-claim-kind": kind, "data-fk": `claim-kind:${kind}`,
      "aria-pressed": picked.kind === kind ? "true" : "false", text: kindLabel(kind) })));
  const choices = picked.kind ? el("div", { class: "claim-options", role: "group" },
    options(picked.kind, v).map((o) => el("button", { type: "button", class: "react claim", "data-claim": o.line,
      "data-fk": `claim:${o.key}`, "aria-label": o.line, title: o.line, disabled: slow, text: o.text }))) : null;
  rebuild(box, [chooser, choices].filter(Boolean));
}

// `write(text)`: the chat's sender (its channel, its limit).
export function bindClaims(write) {
  const box = el("div", { id: "chat-claims", class: "claims", hidden: true });
  $("#chat-form").append(box);
  box.addEventListener("click", (e) => {
    const kind = e.target.closest("button[data-claim-kind]")?.dataset.claimKind;
    if (kind) {
      picked.kind = picked.kind === kind ? null : kind;
      renderClaims(false);
      return;
    }
    const line = e.target.closest("button[data-claim]")?.dataset.claim;
    if (line) {
      picked.kind = null;
      write(line);
    }
  });
}
