// One line of news over the page for a few seconds (#toast; made if the page has none).
import { el } from "./dom.js";

let timer = null;

function box() {
  let node = document.querySelector("#toast");
  if (!node) {
    node = el("div", { id: "toast", class: "toast", role: "alert", hidden: true });
    document.body.append(node);
  }
  return node;
}

// Messages that come together (a line expired and its draft set aside, at one welcome) are
// shown together rather than the last one hiding the others.
export function toast(text) {
  const node = box();
  const shown = node.hidden ? [] : [...node.children].map((p) => p.textContent);
  if (!shown.includes(text)) node.replaceChildren(...[...shown, text].map((line) => el("p", { text: line })));
  node.hidden = false;
  clearTimeout(timer);
  timer = setTimeout(() => (node.hidden = true), 5000);
}
