// Building DOM nodes without a framework.

// node -> {type: handler}, read when the event fires: a node kept by `rebuild` runs the handlers
// of the node it was brought in line with. A type once listened for stays a key (its handler
// undefined when the node no longer has one), so the keys are the node's listeners.
const handlers = new WeakMap();

function on(node, type, handler) {
  const own = handlers.get(node) ?? {};
  if (!(type in own)) node.addEventListener(type, (e) => handlers.get(node)[type]?.call(node, e));
  handlers.set(node, { ...own, [type]: handler });
}

export function el(tag, attrs = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === "class") node.setAttribute("class", v);
    else if (k === "text") node.textContent = v;
    // Through the CSSOM: the Content-Security-Policy (style-src 'self') refuses style attributes.
    else if (k === "style") node.style.cssText = v;
    else if (k.startsWith("on")) on(node, k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c != null) node.append(c);
  return node;
}

// A node's identity among its siblings: its focus key, its prompt key or its id.
function keyOf(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  return node.getAttribute("data-fk") ?? node.getAttribute("data-key") ?? (node.id || null);
}

// Whether `old` may be brought in line with `next` rather than replaced by it. A picture with
// another source is a new one (its error handler names its own role: art.js).
function sameKind(old, next) {
  return old.nodeType === next.nodeType && old.nodeName === next.nodeName && keyOf(old) === keyOf(next)
    && (old.nodeName !== "IMG" || old.getAttribute("src") === next.getAttribute("src"));
}

const animated = (css) => css.includes("animation");

function morph(old, next) {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
    return;
  }
  for (const { name } of [...old.attributes]) if (name !== "style" && !next.hasAttribute(name)) old.removeAttribute(name);
  for (const { name, value } of next.attributes) if (name !== "style" && old.getAttribute(name) !== value) old.setAttribute(name, value);
  // A running animation keeps its own timing (motion.js): setting its delay again would make it jump.
  const css = next.style?.cssText ?? "";
  if (old.style && old.style.cssText !== css && !(animated(old.style.cssText) && animated(css))) old.style.cssText = css;
  const theirs = handlers.get(next) ?? {};
  for (const type of Object.keys(handlers.get(old) ?? {})) if (!(type in theirs)) on(old, type, undefined);
  for (const [type, handler] of Object.entries(theirs)) on(old, type, handler);
  morphChildren(old, [...next.childNodes]);
}

// Keyed children are matched by key, the others in order; what matches is kept and brought in
// line, the rest replaced.
function morphChildren(container, nodes) {
  const olds = [...container.childNodes];
  const byKey = new Map(olds.filter(keyOf).map((n) => [keyOf(n), n]));
  const unkeyed = olds.filter((n) => !keyOf(n));
  let next = 0;
  const kept = nodes.map((node) => {
    let match = null;
    if (keyOf(node)) match = byKey.get(keyOf(node));
    else {
      const at = unkeyed.findIndex((n, i) => i >= next && sameKind(n, node));
      if (at >= 0) [match, next] = [unkeyed[at], at + 1];
    }
    if (!match || !sameKind(match, node)) return node;
    byKey.delete(keyOf(match));
    morph(match, node);
    return match;
  });
  const keep = new Set(kept);
  for (const n of olds) if (!keep.has(n)) n.remove();
  kept.forEach((node, i) => {
    if (container.childNodes[i] !== node) container.insertBefore(node, container.childNodes[i] ?? null);
  });
}

// Brings a container's children in line with `nodes`, keeping every node that stays (so a button
// pressed while other players act is the same button when the press ends, and its click lands),
// and gives focus back to the element with the same data-fk if its node was replaced, so a
// keyboard user keeps their place when the view changes under them.
export function rebuild(container, nodes) {
  const html = nodes.map((n) => (n.nodeType === Node.ELEMENT_NODE ? n.outerHTML : n.textContent)).join("");
  if (container.innerHTML === html) return;
  const active = document.activeElement;
  const fk = container.contains(active) ? active.dataset.fk : null;
  morphChildren(container, nodes);
  if (fk && document.activeElement !== active) container.querySelector(`[data-fk="${CSS.escape(fk)}"]`)?.focus();
}
