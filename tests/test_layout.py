"""The package seams (docs/architecture.md, "Packages"), read from the source's syntax trees: no
product package imports the test suite (what tests and load scripts share lives in devstack/),
the gateway reaches actors/ only through its face, `actors/__init__.py`, and no test module
imports another."""
import ast
import subprocess
import sys
from pathlib import Path

import actors

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["actors", "gateway", "rules", "loadtest", "deploy", "devstack"]


def imports(package: str):
    """(file, line, module, names) for every absolute import in the package's Python files,
    wherever it sits (top level, a function, an `if TYPE_CHECKING:` block)."""
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            where = f"{path.relative_to(ROOT)}:{node.lineno}" if hasattr(node, "lineno") else ""
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield where, alias.name, []
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield where, node.module, [alias.name for alias in node.names]


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
