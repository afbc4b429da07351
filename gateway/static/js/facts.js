// What a seat knows by its card, as the card shows it: the view fields each role declares (GET
// /api/rules "facts": field, shape, told_by, told_in; rules/role.py Fact), in the words of the
// catalogues' `fact.<field>` (`fact.<field>.alone`: an "others" fact with nobody else). No role
// is named here: a new role's facts come with its declaration and its words.
import { t, has } from "./i18n.js";

let declared = [];

// The declaration's `facts`, fetched once per page.
export function declareFacts(facts) {
  declared = facts || [];
}

// How each shape of field reads: [catalogue key suffix, placeholders] per line. `c`: {me, nameOf,
// roleName}.
const SHAPES = {
  seat: (seat, c) => [["", { name: c.nameOf(seat) }]],
  seats: (seats, c) => [["", { names: seats.map(c.nameOf).join(", ") }]],
  couple: (seats, c) => [["", { names: seats.map(c.nameOf).join(" ♥ ") }]],
  others: (seats, c) => {
    const others = seats.filter((s) => s !== c.me);
    return others.length ? [["", { names: others.map(c.nameOf).join(", ") }]] : [[".alone", {}]];
  },
  results: (results, c) => results.map((r) =>
    ["", { name: c.nameOf(r.seat), role: c.roleName(r.role), n: r.night }]),
};

// A new game: the seat knows nothing by its card yet.
export function forgetFacts(view) {
  for (const f of declared) view[f.field] = null;
}

// An event that tells a fact (its `told_by`) brings it into the view until the next welcome's.
export function tellFact(view, ev) {
  for (const f of declared) {
    if (f.told_by !== ev.kind) continue;
    view[f.field] = f.shape === "results"
      ? [...(view[f.field] || []), { seat: ev.seat, role: ev.role, night: view.day }]
      : ev[f.told_in];
  }
}

// The card's lines, [{field, text}], for every declared fact the view holds, in the roles' order.
export function factLines(v, c) {
  return declared.filter((f) => v[f.field] != null && SHAPES[f.shape]).flatMap((f) =>
    SHAPES[f.shape](v[f.field], c).map(([suffix, vars]) => [`fact.${f.field}${suffix}`, vars])
      .filter(([key]) => has(key)).map(([key, vars]) => ({ field: f.field, text: t(key, vars) })));
}
