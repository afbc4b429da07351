// Role pictures: one SVG per role id in ../roles/ (a new role's picture is one file named by its
// id); a role without one shows the generic card, and is remembered so it is not asked for again.
const missing = new Set();

export function pictureUrl(role) {
  return new URL(`../roles/${role && !missing.has(role) ? role : "_generic"}.svg`, import.meta.url).pathname;
}

export function rolePicture(role, { className = "art", label = "" } = {}) {
  const img = document.createElement("img");
  img.className = className;
  img.src = pictureUrl(role);
  img.alt = label;
  img.decoding = "async";
  img.dataset.role = role || "";
  img.addEventListener("error", () => {
    if (!role || missing.has(role)) return;
    missing.add(role);
    img.src = pictureUrl(null);
  }, { once: true });
  return img;
}
