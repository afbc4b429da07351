"""The client's modules import one another without a circle: a mode of play plugs into the generic
screens (screens/pass.js into screens/table.js), they never import it (issue 32, part 6)."""
from __future__ import annotations

import re
from pathlib import Path

JS = Path(__file__).resolve().parents[2] / "gateway" / "static" / "js"
IMPORT = re.compile(r'^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"', re.M)


def imports() -> dict[str, set[str]]:
    """module -> the client's modules it imports (not the vendored ones), as paths under js/."""
    graph = {}
    for script in JS.rglob("*.js"):
        found = [(script.parent / name).resolve()
                 for name in IMPORT.findall(script.read_text(encoding="utf-8"))]
        graph[script.relative_to(JS).as_posix()] = {
            path.relative_to(JS).as_posix() for path in found if path.is_relative_to(JS)}
    return graph


def a_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports, or None."""
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        for imported in sorted(graph.get(module, ())):
            if circle := walk(imported, path + [module]):
                return circle
        done.add(module)
        return None

    return next((c for m in sorted(graph) if (c := walk(m, []))), None)


def test_the_client_s_modules_import_one_another_without_a_circle():
    graph = imports()
    assert "pass.js" in graph["screens/pass.js"] and "screens/table.js" in graph["screens/pass.js"]
    assert a_circle(graph) is None
    assert "screens/pass.js" not in graph["screens/table.js"]


def test_a_circle_is_found():
    assert a_circle({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}}) == [
        "a.js", "b.js", "c.js", "a.js"]
    assert a_circle({"a.js": {"b.js"}, "b.js": set()}) is None
