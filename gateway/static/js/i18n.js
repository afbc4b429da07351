// One catalogue per language; every visible string goes through t().
export const LANGS = ["en", "ar", "zh", "vi"];
const RTL = new Set(["ar"]);
const STORE_KEY = "ww:lang";

let current = "en";
let catalogue = {};
let fallback = {};

async function load(lang) {
  const res = await fetch(new URL(`../i18n/${lang}.json`, import.meta.url));
  if (!res.ok) throw new Error(`catalogue ${lang}: ${res.status}`);
  return res.json();
}

export function pickLanguage() {
  const saved = localStorage.getItem(STORE_KEY);
  if (LANGS.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return "en";
}

export async function setLanguage(lang, { persist = false } = {}) {
  if (!fallback["app.title"]) fallback = await load("en");
  catalogue = lang === "en" ? fallback : await load(lang);
  current = lang;
  if (persist) localStorage.setItem(STORE_KEY, lang);
  document.documentElement.lang = lang;
  document.documentElement.dir = RTL.has(lang) ? "rtl" : "ltr";
  translateStatic(document);
}

export function language() {
  return current;
}

// Missing keys fall back to English, then to the key itself, so a gap shows rather than breaks.
export function t(key, vars = {}) {
  const text = catalogue[key] ?? fallback[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
}

// A name (or a player's words) inside a sentence: First Strong Isolate ... Pop Directional
// Isolate, so its own direction does not reorder the words around it (an Arabic name in an
// English line, a Latin name with digits in an Arabic one).
export const isolate = (text) => `\u2068${text}\u2069`;

export function has(key) {
  return key in catalogue || key in fallback;
}

// Every key starting with `prefix`, in the English catalogue's order.
export function keys(prefix) {
  return Object.keys(fallback).filter((key) => key.startsWith(prefix));
}

export function translateStatic(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
}
