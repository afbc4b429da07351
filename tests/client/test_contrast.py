"""Issue 22 item 5 in Debian's headless Chromium against the real stack: every text the main
screens show is legible (WCAG contrast >= 4.5:1 against what lies under it) in the day's palette
and the night's, at 360 px and at 1280x720, in English and in Arabic; players' names are
bidi-isolated wherever other words sit next to them; a new screen opens at its top; the dawn's
banner never takes a tap meant for a control under it, and is gone from the end screen.

One game for all of it (the suite's time): six seats, two languages, two widths.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from devstack.stack import durations
from tests.client.table import (
    GAME_MS, PHONE, ROOT, THE_END, Player, answer, chromium, new_player, play, seat_table, shown,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LAPTOP_720 = {"width": 1280, "height": 720}
# Names that bidi reorders when nothing isolates them: Latin ones with digits in an Arabic line,
# an Arabic one in an English line.
SPECS = [("Quill", "en-US", LAPTOP_720), ("سارة", "ar", PHONE), ("Zed 7", "en-US", PHONE),
         ("Omar 2", "ar", LAPTOP_720),
         ("Ynez", "ar", PHONE), ("Xiu", "en-US", LAPTOP_720)]  # six: the smallest table
NAMES = [name for name, _, _ in SPECS]
DURATIONS = durations(30, witch=10)
MIN_RATIO = 4.5
WHERE = """() => ({scrollY, foot: document.documentElement.scrollHeight - innerHeight,
    move: document.querySelector("#prompts .prompt")?.getBoundingClientRect().toJSON()})"""
# The page at its top, or, when the seat has a move, with the move in view under the sticky phase
# bar as showTurn scrolls it (or as far as the page scrolls: a move near the foot cannot reach the
# bar), once a smooth scroll there is over. Which seats hold a move is the deal's.
AT_TOP_OR_AT_THE_MOVE = """() => {
    const move = document.querySelector("#prompts .prompt");
    if (!move) return scrollY === 0;
    const box = move.getBoundingClientRect();
    const under = document.querySelector(".phasebar").getBoundingClientRect().bottom + 8;
    const atFoot = scrollY + innerHeight >= document.documentElement.scrollHeight - 1;
    return box.bottom <= innerHeight + 1 && (box.top >= under - 1 || atFoot);
}"""
EN = json.loads((ROOT / "gateway/static/i18n/en.json").read_text(encoding="utf-8"))
AR = json.loads((ROOT / "gateway/static/i18n/ar.json").read_text(encoding="utf-8"))

# Every visible text of the page (text nodes, form fields' values and placeholders, generated
# ::before/::after content) against the colours under it: the element's background and its
# ancestors' until an opaque one, each translucent layer blended over what is below it. A
# gradient counts with the colours it has where the text is (radial ones centred by
# `circle at`; any other gradient with all of its colours); specks (stars a few px wide) do not.
# Disabled controls are exempt (WCAG 1.4.3). Returns the offenders.
CONTRAST = """(minRatio) => {
    const parse = (s) => {
        let m = s.match(/^rgba?\\(([^)]*)\\)$/);
        if (m) { const [r, g, b, a = 1] = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
                 return { r: r / 255, g: g / 255, b: b / 255, a }; }
        m = s.match(/^color\\(srgb ([^)]*)\\)$/);
        if (m) { const [r, g, b, a = 1] = m[1].split(/[\\s\\/]+/).filter(Boolean).map(Number);
                 return { r, g, b, a }; }
        if (s === "transparent") return { r: 0, g: 0, b: 0, a: 0 };
        throw new Error(`a colour this test cannot read: ${s}`);
    };
    const blend = (top, bottom) => ({ r: top.r * top.a + bottom.r * (1 - top.a),
                                       g: top.g * top.a + bottom.g * (1 - top.a),
                                       b: top.b * top.a + bottom.b * (1 - top.a), a: 1 });
    const channel = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    const lum = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
    const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
        return (hi + 0.05) / (lo + 0.05); };
    const hex = (c) => "#" + [c.r, c.g, c.b]
        .map((v) => Math.round(v * 255).toString(16).padStart(2, "0")).join("");
    const topLevel = (s) => { const out = []; let depth = 0, start = 0;
        for (let i = 0; i < s.length; i++) {
            if (s[i] === "(") depth++; else if (s[i] === ")") depth--;
            else if (s[i] === "," && depth === 0) {
                out.push(s.slice(start, i).trim()); start = i + 1; }
        }
        out.push(s.slice(start).trim()); return out; };
    const COLOUR = /rgba?\\([^)]*\\)|color\\(srgb[^)]*\\)|transparent/;
    // The colours of one gradient layer of `node` under the text's rectangle `r`.
    const layerColours = (layer, node, r) => {
        const m = layer.match(/^(?:repeating-)?(linear|radial|conic)-gradient\\((.*)\\)$/);
        if (!m) return [];
        const args = topLevel(m[2]);
        const head = COLOUR.test(args[0].split(" ")[0]) ? null : args.shift();
        const colourArgs = args.filter((a) => COLOUR.test(a));
        const stops = colourArgs.map((a, i) => { const c = a.match(COLOUR)[0];
            const pos = a.slice(c.length).trim().split(" ")[0];
            const at = pos.endsWith("%") ? parseFloat(pos) : pos === "0px" ? 0
                : pos === "" && i === 0 ? 0
                : pos === "" && i === colourArgs.length - 1 ? 100 : null;
            return { c: parse(c), pos: at }; });
        if (m[1] !== "radial" || !head) return stops.map((s) => s.c);
        const size = head.match(/^([\\d.]+)px(?: ([\\d.]+)px)?/);
        if (size && Math.max(Number(size[1]), Number(size[2] ?? size[1])) < 4) return [];
        const at = head === "circle" ? [null, 50, 50]
            : head.match(/^circle at ([\\d.]+)% ([\\d.]+)%$/);  // centred: "circle"
        if (!at || stops.some((s) => s.pos == null)) return stops.map((s) => s.c);
        const box = node.getBoundingClientRect();
        const cx = box.left + box.width * at[1] / 100, cy = box.top + box.height * at[2] / 100;
        const ray = Math.max(...[[box.left, box.top], [box.right, box.top],
                                 [box.left, box.bottom], [box.right, box.bottom]]
            .map(([x, y]) => Math.hypot(x - cx, y - cy)));  // farthest-corner
        const near = Math.hypot(Math.max(r.left - cx, 0, cx - r.right),
                                Math.max(r.top - cy, 0, cy - r.bottom)) / ray * 100;
        const far = Math.max(...[[r.left, r.top], [r.right, r.top],
                                 [r.left, r.bottom], [r.right, r.bottom]]
            .map(([x, y]) => Math.hypot(x - cx, y - cy))) / ray * 100;
        const seen = [];
        stops.forEach((s, i) => {
            const next = stops[i + 1];
            const from = i === 0 ? -Infinity : s.pos, to = next ? next.pos : Infinity;
            if (from <= far && to >= near) { seen.push(s.c); if (next) seen.push(next.c); }
        });
        return seen;
    };
    // Opaque colours that may lie under `r` at `node`.
    const under = (node, r) => {
        if (!node) return [{ r: 1, g: 1, b: 1, a: 1 }];
        const cs = getComputedStyle(node);
        const own = parse(cs.backgroundColor);
        const layers = cs.backgroundImage === "none" ? []
            : topLevel(cs.backgroundImage).flatMap((l) => layerColours(l, node, r));
        const opaqueLayer = layers.length && layers.every((c) => c.a >= 1);
        let below = own.a >= 1 ? [own]
            : under(node.parentElement, r).map((u) => (own.a > 0 ? blend(own, u) : u));
        if (!layers.length) return below;
        const painted = layers.filter((c) => c.a > 0)
            .flatMap((c) => (c.a >= 1 ? [c] : below.map((u) => blend(c, u))));
        return opaqueLayer ? painted : [...below, ...painted];
    };
    const opacity = (node) => { let o = 1;
        for (let n = node; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity);
        return o; };
    const describe = (node) => {
        const parts = [];
        for (let n = node; n && n !== document.body && parts.length < 4; n = n.parentElement) {
            parts.unshift(n.id ? `#${n.id}`
                : n.tagName.toLowerCase() + [...n.classList].map((c) => `.${c}`).join(""));
            if (n.id) break;
        }
        return parts.join(" > ");
    };
    const offenders = [];
    let checked = 0;
    const check = (node, colour, text) => {
        const r = node.getBoundingClientRect();
        const fg = parse(colour);
        fg.a *= opacity(node);
        for (const bg of under(node, r)) {
            const shown = fg.a >= 1 ? fg : blend(fg, bg);
            const value = ratio(shown, bg);
            checked += 1;
            if (value < minRatio) {
                offenders.push({ where: describe(node), text: text.trim().slice(0, 40),
                                 colour: hex(shown), background: hex(bg),
                                 ratio: Math.round(value * 100) / 100 });
                return;
            }
        }
    };
    for (const node of document.body.querySelectorAll("*")) {
        if (node.closest("svg, option, script, style, template")) continue;
        if (!node.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
        const r = node.getBoundingClientRect();
        if (r.width < 2 || r.height < 2) continue;  // .sr-only
        if (node.matches(":disabled") || node.closest("fieldset:disabled")) continue;
        const cs = getComputedStyle(node);
        const own = [...node.childNodes].filter((c) => c.nodeType === Node.TEXT_NODE)
            .map((c) => c.data).join("");
        if (own.trim()) check(node, cs.color, own);
        if (node.matches(
            "input:not([type=checkbox]):not([type=radio]):not([type=hidden]), textarea, select")) {
            if (node.value) check(node, cs.color, node.value);
            else if (node.placeholder)
                check(node, getComputedStyle(node, "::placeholder").color, node.placeholder);
        }
        for (const pseudo of ["::before", "::after"]) {
            const ps = getComputedStyle(node, pseudo);
            const m = ps.content.match(/^"(.*)"$/);
            if (m && m[1].trim()) check(node, ps.color, m[1]);
        }
    }
    return { offenders, checked, phase: document.body.dataset.phase ?? null,
             dir: document.documentElement.dir, screen: document.body.dataset.screen ?? null };
}"""

# Every occurrence of a player's name in the page's visible text, unless other words could not
# reorder it: wrapped in FSI...PDI (U+2068, U+2069), alone in an element that isolates it (<bdi>,
# dir, unicode-bidi isolate or plaintext), or alone in its own paragraph (a block, a flex item).
BIDI = """(names) => {
    const isolating = (el) => el.tagName === "BDI"
        || ["isolate", "plaintext", "isolate-override"].includes(getComputedStyle(el).unicodeBidi);
    const paragraphOf = (el) => { let b = el;
        while (b.parentElement && ["inline", "contents"].includes(getComputedStyle(b).display))
            b = b.parentElement;
        return b; };
    const bad = [];
    let seen = 0;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (el.closest("script, style, template, svg, option")
            || !el.checkVisibility({ visibilityProperty: true })) continue;
        for (const name of names) {
            for (let i = n.data.indexOf(name); i >= 0; i = n.data.indexOf(name, i + 1)) {
                seen += 1;
                const wrapped = n.data[i - 1] === "\\u2068"
                    && n.data[i + name.length] === "\\u2069";
                const alone = n.data.trim() === name
                    && (isolating(el) || paragraphOf(el).textContent.trim() === name);
                if (!wrapped && !alone) bad.push({ name, text: n.data.trim().slice(0, 60),
                    in: el.tagName.toLowerCase() + [...el.classList].map((c) => `.${c}`).join("")
                        + (el.id ? `#${el.id}` : "") });
            }
        }
    }
    return { bad, seen };
}"""

# The dawn's banner over the page: at the centre of each control under it (or of the banner, if
# none is), the element a tap lands on must not be the banner's. Null when no banner shows.
DAWN = """() => {
    const dawn = document.querySelector("#dawn");
    if (!dawn.checkVisibility()) return null;
    const box = dawn.querySelector(".dawn-box").getBoundingClientRect();
    const inside = (x, y) => x > box.left && x < box.right && y > box.top && y < box.bottom;
    const points = [...document.querySelectorAll("button, a[href], input, select, textarea")]
        .filter((c) => !dawn.contains(c) && c.checkVisibility())
        .map((c) => { const r = c.getBoundingClientRect();
            return { x: r.left + r.width / 2, y: r.top + r.height / 2,
                     control: c.id || c.className || c.tagName }; })
        .filter((p) => inside(p.x, p.y));
    if (!points.length)
        points.push({ x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2,
                      control: null });
    return points.map((p) => { const hit = document.elementFromPoint(p.x, p.y);
        return { control: p.control,
                 hit: hit ? hit.tagName.toLowerCase() + (hit.id ? `#${hit.id}` : "") : null,
                 blocked: !!hit?.closest("#dawn") }; });
}"""

# A toast the way the page shows one (its own module: the same #toast, the same style).
TOAST = """async (text) => { const { toast } = await import("/js/toast.js"); toast(text); }"""
HIDE_TOAST = "() => { document.querySelector('#toast').hidden = true; }"


def palette(phase: str | None) -> str:
    if phase and (phase.startswith("day.") or phase in ("hunter", "successor", "scapegoat")):
        return "day"
    return "night" if phase and phase.startswith("night.") else "default"


SETTLE = """() => document.getAnimations().forEach((a) => {
    if (a.effect?.getComputedTiming().iterations !== Infinity) a.finish();
})"""


class Looks:
    """What each page was checked on, and what failed, to be reported together at the end."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.seen: dict[str, set[str]] = {}
        self.dawns: list[dict] = []
        self.toasted: set[tuple[str, str]] = set()

    async def look(self, page, who: str, stage: str, *, toast: str | None = None) -> str:
        # The colours as they settle: a fade between the palettes (nightfall, daybreak) in flight
        # mixes the two, a moment no one reads. Without motion the palettes are the same ones
        # (tests/client/test_motion.py checks the motion); what is in flight is finished.
        await page.emulate_media(reduced_motion="reduce")
        await page.evaluate(SETTLE)
        result = await page.evaluate(CONTRAST, MIN_RATIO)
        where = (f"{who} ({page.viewport_size['width']} px, {result['dir']}) "
                 f"{stage} [{result['phase']}]")
        assert result["checked"] > 20, where  # the page had its texts to check
        kind = palette(result["phase"]) if result["screen"] == "screen-game" else result["screen"]
        self.seen.setdefault(who, set()).add(f"{stage}:{kind}")
        self.problems += [f"{where}: {o}" for o in result["offenders"]]
        bidi = await page.evaluate(BIDI, NAMES)
        self.problems += [f"{where}: name not isolated {b}" for b in bidi["bad"]]
        if toast and (who, kind) not in self.toasted:  # the toast, once per palette a page shows
            self.toasted.add((who, kind))
            await page.evaluate(TOAST, toast)
            shown_toast = await page.evaluate(CONTRAST, MIN_RATIO)
            self.seen[who].add(f"toast:{kind}")
            self.problems += [f"{where} with a toast: {o}" for o in shown_toast["offenders"]]
            await page.evaluate(HIDE_TOAST)
        return kind

    async def dawn(self, page, who: str) -> None:
        taps = await page.evaluate(DAWN)
        if taps is not None:
            self.dawns.append({"who": who, "taps": taps})


def error_text(p: Player) -> str:
    locale = next(locale for name, locale, _ in SPECS if name == p.name)
    return (AR if locale == "ar" else EN)["error.rate_limited"]


@pytest.mark.timeout(900)
async def test_texts_legible_names_isolated_screens_open_at_the_top_the_dawn_takes_no_tap(stack):
    gateway = stack.start_gateway()
    looks = Looks()

    async with chromium() as browser:
        # The home page of each language and width, with an error toast (a room that is not there).
        for name, locale, viewport in SPECS[:4]:  # each language at each width
            visitor = await new_player(browser, name, locale=locale, viewport=viewport)
            page = visitor.page
            await page.goto(gateway.url + "/")
            await page.wait_for_selector("#screen-home:not([hidden]) #tables-open li")
            await looks.look(page, name, "home")
            await page.fill("#form-join-code input[name=room]", "ZZZZZZ")
            await page.fill("#form-join-code input[name=name]", name)
            await page.click("#form-join-code button[type=submit]")
            await page.wait_for_selector("#toast:not([hidden])")
            await looks.look(page, name, "home error toast")
            await visitor.context.close()

        scrolled: dict[str, float] = {}

        async def in_the_lobby(players):
            for p in players:
                await p.page.wait_for_selector("#conn[data-state=online]")
                await looks.look(p.page, p.name, "lobby")
                if p.page.viewport_size == PHONE:  # the lobby's foot, before the game opens
                    scrolled[p.name] = await p.page.evaluate(
                        "() => { window.scrollTo(0, document.documentElement.scrollHeight); "
                        "return scrollY; }")

        _, players = await seat_table(browser, gateway.url, SPECS, DURATIONS, roles=["seer"],
                                      before_start=in_the_lobby)
        # A new screen opens at its top: the game's, after a lobby scrolled to its foot. A seat
        # with a move this night is then scrolled to it (table.js showTurn), and only that far.
        assert scrolled and all(y > 0 for y in scrolled.values()), scrolled
        for p in players:
            if p.name in scrolled:
                try:
                    await p.page.wait_for_function(AT_TOP_OR_AT_THE_MOVE, timeout=10_000)
                except PlaywrightTimeout:
                    raise AssertionError((p.name, scrolled[p.name],
                                          await p.page.evaluate(WHERE))) from None
        wolves = {p.seat for p in players if p.role == "werewolf"}
        for p in players:  # the first night, for every seat (most have nothing to do in it)
            await looks.look(p.page, p.name, "table", toast=error_text(p))

        async def by_day(p: Player) -> None:  # every seat's first day, the dawn's banner over it
            await shown(p.page, f"body[data-phase^='day.'] #screen-game:not([hidden]), {THE_END}")
            await looks.dawn(p.page, p.name)
            if await p.page.locator(THE_END).count() == 0:
                await looks.look(p.page, p.name, "table", toast=error_text(p))

        async def looked_at(p: Player, key: str, action: str, wolves: set[int]) -> None:
            """The prompt looked at, answered, and "Sent" looked at once answered."""
            page = p.page
            await looks.dawn(page, p.name)
            kind = await looks.look(page, p.name, "prompt", toast=error_text(p))
            await answer(p, key, action, wolves)
            if f"sent:{kind}" not in looks.seen[p.name] and await page.locator(
                    f'.prompt[data-key="{key}"][data-answered] .ok').count():
                await looks.look(page, p.name, "sent")

        async def plays(p: Player) -> None:
            page = p.page
            await play(p, wolves, move=looked_at)
            # The end screen: at its top, no dawn over it.
            assert await page.evaluate("() => scrollY") == 0, p.name
            assert not await page.evaluate(
                "() => document.querySelector('#dawn').checkVisibility()"), p.name
            await looks.look(page, p.name, "end")

        await asyncio.gather(*(by_day(p) for p in players), *(plays(p) for p in players))

        # The review, in both languages and widths.
        for p in players:
            await p.page.click("#review-link")
            await p.page.wait_for_selector("#review-timeline-card:not([hidden])", timeout=GAME_MS)
            await looks.look(p.page, p.name, "review")


    assert not looks.problems, "\n".join(looks.problems)
    # What the game showed: every page by day, by night, in the lobby, at the end and on the
    # review, toasts in both palettes; "Sent" by day; the dawn over at least one page, taking no
    # tap.
    for name in NAMES:
        seen = looks.seen[name]
        home = ("home:screen-home", "home error toast:screen-home") if name in NAMES[:4] else ()
        for want in (*home, "lobby:screen-lobby", "table:night",
                     "table:day", "toast:night", "toast:day", "end:screen-end", "review:review"):
            assert want in seen, (name, want, sorted(seen))
    assert any(s.startswith("sent:day") for seen in looks.seen.values() for s in seen), looks.seen
    assert looks.dawns, "no page saw the dawn's banner"
    blocked = [(d["who"], t) for d in looks.dawns for t in d["taps"] if t["blocked"]]
    assert not blocked, blocked
