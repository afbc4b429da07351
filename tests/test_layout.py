"""The package seams (docs/architecture.md, "Packages"), read from the source's syntax trees and
from the package table itself: each package imports only what its row allows, no package imports
a higher layer (so no cycle between packages), no product package imports the test suite (what
tests and load scripts share lives in devstack/), the gateway reaches actors/ only through its
face, `actors/__init__.py`, and takes only the declarations of rules/, the served code never
edits `sys.path`, and no test module imports another."""
import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import actors

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["actors", "gateway", "rules", "bots", "loadtest", "deploy", "devstack"]
# Each may import those before it, never those after it (tests/ is the top).
LAYERS = ["rules", "bots", "actors", "gateway", "devstack", "loadtest", "tests"]
# Where the path the modules are found on is left as Python set it.
NO_SYS_PATH = ["rules", "bots", "actors", "gateway", "devstack"]


@functools.cache
def trees(package: str) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), filename=str(path)))
            for path in sorted((ROOT / package).rglob("*.py"))]


@functools.cache
def imports(package: str) -> list[tuple[str, str, list[str]]]:
    """(file:line, module, names) for every absolute import in the package's Python files,
    wherever it sits (top level, a function, an `if TYPE_CHECKING:` block)."""
    found = []
    for path, tree in trees(package):
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{node.lineno}" if hasattr(node, "lineno") else ""
            if isinstance(node, ast.Import):
                found += [(where, alias.name, []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((where, node.module, [alias.name for alias in node.names]))
    return found


@functools.cache
def package_table() -> dict[str, str]:
    """docs/architecture.md's "Packages" table: each package's "may import" cell."""
    section = (ROOT / "docs" / "architecture.md").read_text().split("\n## Packages", 1)[1]
    rows = {}
    for line in section.split("\n## ", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and (name := re.fullmatch(r"`(\w+)/`", cells[0])):
            rows[name.group(1)] = cells[2]
    return rows


def allowed(package: str, top: str) -> bool:
    """May `package` import the top-level module `top`, by its row of the table? A cell names
    what may be imported (`stdlib only`, `-`: nothing else) or, as `anything but ...`, what may
    not; a parenthesis qualifies a name (checked by its own test below)."""
    if top == package or top in sys.stdlib_module_names:
        return True
    cell = package_table()[package]
    names = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cell)))
    return top not in names if cell.startswith("anything but") else top in names


def test_the_table_has_a_row_for_every_package_and_no_other():
    with_python = {path.relative_to(ROOT).parts[0] for path in ROOT.glob("*/**/*.py")
                   if not path.relative_to(ROOT).parts[0].startswith(".")}  # .venv, .git
    assert set(package_table()) == set(PRODUCT) >= with_python - {"tests"}
    assert LAYERS == [package for package in LAYERS if package in PRODUCT or package == "tests"]


def test_every_package_imports_only_what_its_row_allows():
    offending = [f"{where}: {module}" for package in PRODUCT
                 for where, module, names in imports(package)
                 if not allowed(package, module.split(".")[0])]
    assert offending == []


def first_party_imports(package: str):
    for where, module, _ in imports(package):
        top = module.split(".")[0]
        if top != package and top in LAYERS:
            yield where, top


def test_no_package_imports_a_higher_layer():
    offending = [f"{where}: {top}" for package in PRODUCT if package in LAYERS
                 for where, top in first_party_imports(package)
                 if LAYERS.index(top) > LAYERS.index(package)]
    assert offending == []


def test_no_import_cycle_between_packages():
    graph = {package: {top for _, top in first_party_imports(package)} for package in PRODUCT}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(step == goal or (step not in seen and reaches(step, goal, seen | {step}))
                   for step in graph.get(start, ()))

    assert [package for package in PRODUCT if reaches(package, package, set())] == []


def test_the_image_carries_every_package_the_served_code_imports():
    """deploy/Dockerfile copies packages one by one: one left out starts nowhere but in the image
    (the bots package once stopped every deployed gateway at its first import)."""
    copied = set(re.findall(r"^COPY (\w+) \1$", (ROOT / "deploy/Dockerfile").read_text(), re.M))
    needed, todo = set(), ["gateway"]
    while todo:
        package = todo.pop()
        needed.add(package)
        todo += [top for _, top in first_party_imports(package) if top not in needed]
    assert needed <= copied


def test_the_gateway_takes_only_the_declarations_of_rules():
    """Data that describes the game (roles, presets, the settings' schema), never the engine."""
    qualifier = re.search(r"`rules` \(its declarations only: ([^)]*)\)",
                          package_table()["gateway"])
    declarations = set(re.findall(r"`(\w+)`", qualifier.group(1)))
    taken = []
    for path, tree in trees("gateway"):
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '')}"
            if (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.split(".")[0] == "rules"):
                taken += [(where, alias.name) for alias in node.names]
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "rules"):
                taken.append((where, node.attr))
    assert taken, "the gateway serves the rules' declarations"
    assert [f"{where}: rules.{name}" for where, name in taken if name not in declarations] == []


def test_the_served_code_and_devstack_never_edit_sys_path():
    offending = []
    for package in NO_SYS_PATH:
        for path, tree in trees(package):
            for node in ast.walk(tree):
                if ((isinstance(node, ast.Attribute) and node.attr == "path"
                     and isinstance(node.value, ast.Name) and node.value.id == "sys")
                        or (isinstance(node, ast.ImportFrom) and node.module == "sys"
                            and any(alias.name == "path" for alias in node.names))):
                    offending.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offending == []


def test_no_product_package_imports_the_tests():
    offending = [f"{where}: {module}" for package in PRODUCT
                 for where, module, names in imports(package)
                 if module == "tests" or module.startswith("tests.")]
    assert offending == []


def test_no_test_module_imports_another():
    """What tests share lives in a conftest.py or a helper module, never named test_*: a test
    module is collected, never a library (its tests would run again wherever it is imported)."""
    def a_test_module(name: str) -> bool:
        return name.rsplit(".", 1)[-1].startswith("test_")
    offending = [f"{where}: {module}" for where, module, names in imports("tests")
                 if a_test_module(module) or any(a_test_module(name) for name in names)]
    assert offending == []


def test_the_gateway_imports_actors_through_its_face_only():
    offending, used = [], set()
    for where, module, names in imports("gateway"):
        if module.startswith("actors."):
            offending.append(f"{where}: {module} (a submodule of actors)")
        elif module == "actors":
            used |= set(names)
            offending += [f"{where}: actors.{name} (not in actors.__all__)"
                          for name in names if name not in actors.__all__]
    assert offending == []
    # The face is what the gateway uses: no more (a name the gateway dropped leaves the face).
    assert used == set(actors.__all__)


def test_the_face_resolves_every_name_it_lists():
    assert sorted(actors._MODULE_OF) == sorted(actors.__all__)
    for name in actors.__all__:
        module = __import__(f"actors.{actors._MODULE_OF[name]}", fromlist=[name])
        assert getattr(actors, name) is getattr(module, name), name


def test_the_face_loads_nothing_until_asked_and_only_what_is_asked():
    probe = ("import sys, actors\n"
             "before = sorted(m for m in sys.modules if m.startswith('actors.'))\n"
             "from actors import Config, clean_name\n"
             "print(before, 'ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["[]", "False"]
