"""axe-core, Deque's accessibility engine, run inside a page (issue 37 part 1).

The engine is the npm package's own build (axe.min.js), as the PyPI package axe-playwright-python
ships it in its wheel: one `pip install -e .[test]` brings it, with no Node or npm on the machine
and no blob in this repository. It is evaluated in the page through the DevTools protocol, which
the gateway's Content-Security-Policy (script-src 'self') does not govern, as it would an injected
<script> tag."""
from __future__ import annotations

from importlib.resources import files

from playwright.async_api import Page

AXE = (files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
# What issue 37 counts: the impacts a reader cannot get past. Minor and moderate ones are reported
# by axe too, but are not the target.
BLOCKING = ("serious", "critical")
# One run at a time in a page (axe refuses a second meanwhile): two checks of a page may overlap
# in a test, which waits on several things of one page at once.
RUN = """async (blocking) => {
    const run = () => axe.run(document, { resultTypes: ["violations"] });
    window.axeTurn = (window.axeTurn || Promise.resolve()).then(run, run);
    const results = await window.axeTurn;
    return results.violations.filter((v) => blocking.includes(v.impact)).map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${n.html.slice(0, 160)}`
            + (n.failureSummary ? ` (${n.failureSummary.replace(/\\s+/g, " ").slice(0, 200)})`
               : "")),
    }));
}"""


async def violations(page: Page) -> list[dict]:
    """The serious and critical violations of the page as it is now, each with its first nodes."""
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        await page.evaluate(AXE)  # once per document: a navigation drops it
    return await page.evaluate(RUN, list(BLOCKING))


def report(found: dict[str, list[dict]]) -> str:
    """`found` (where -> its violations) as lines to read in a failed assertion."""
    return "\n".join(f"{where}: [{v['impact']}] {v['id']} ({v['help']})\n    "
                     + "\n    ".join(v["nodes"])
                     for where, vs in found.items() for v in vs)
