// Building DOM nodes without a framework.
export function el(tag, attrs = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === "class") node.setAttribute("class", v);
    else if (k === "text") node.textContent = v;
    // Through the CSSOM: the Content-Security-Policy (style-src 'self') refuses style attributes.
    else if (k === "style") node.style.cssText = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c != null) node.append(c);
  return node;
}

// Replaces a container's children unless they would come out the same (so a button does not move
// under a finger or a pointer while other players act), and gives focus back to the element with
// the same data-fk, so a keyboard user keeps their place when the view changes under them.
export function rebuild(container, nodes) {
  const html = nodes.map((n) => (n.nodeType === Node.ELEMENT_NODE ? n.outerHTML : n.textContent)).join("");
  if (container.innerHTML === html) return;
  const active = document.activeElement;
  const fk = container.contains(active) ? active.dataset.fk : null;
  container.replaceChildren(...nodes);
  if (fk) container.querySelector(`[data-fk="${CSS.escape(fk)}"]`)?.focus();
}
