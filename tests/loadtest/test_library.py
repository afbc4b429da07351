"""loadtest/ is a library with thin scripts (issue 32), read from the source's syntax trees: a
script imports the library modules, never another script; nothing edits `sys.path` or waives
E402 (everything runs as `python -m loadtest.NAME` from the repository root); every script has a
`main(argv)`; every abuse probe is a module of the table with a `run`."""
import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

from loadtest.abuse.probes import PROBES

ROOT = Path(__file__).resolve().parents[2]
# What the scripts share (stack and stages also have a command of their own: a stack kept up for
# Locust's web UI, one reading of the stage metrics).
LIBRARY = {"loadtest.core", "loadtest.wire", "loadtest.measure", "loadtest.stack",
           "loadtest.runner", "loadtest.stages", "loadtest.flooding"}
NOT_SCRIPTS = LIBRARY | {"loadtest", "loadtest.locustfile"}


def modules():
    for path in sorted((ROOT / "loadtest").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        yield name, path, path.read_text()


def loadtest_imports(tree: ast.AST):
    """Every loadtest module a file imports (`from loadtest import stages`: loadtest.stages)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("loadtest"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "loadtest":
                yield from (f"loadtest.{a.name}" for a in node.names)
            elif node.module.startswith("loadtest."):
                yield node.module


def test_scripts_import_the_library_never_another_script():
    offending = []
    for name, path, text in modules():
        package = name.rsplit(".", 1)[0] if path.name != "__init__.py" else name
        for imported in loadtest_imports(ast.parse(text)):
            inside_its_package = package != "loadtest" and imported.startswith(package)
            if imported not in LIBRARY and not inside_its_package:
                offending.append(f"{name} imports {imported}")
    assert offending == []


def test_nothing_edits_the_import_path_or_waives_imports_at_the_top():
    offending = [f"{name}:{node.lineno} sys.path" for name, _path, text in modules()
                 for node in ast.walk(ast.parse(text))
                 if isinstance(node, ast.Attribute) and node.attr == "path"
                 and isinstance(node.value, ast.Name) and node.value.id == "sys"]
    offending += [f"{name}: {line.strip()}" for name, _path, text in modules()
                  for line in text.splitlines() if "noqa: E402" in line]
    assert offending == []


def test_every_script_has_a_main_taking_its_arguments():
    missing = []
    for name, _path, text in modules():
        if name in NOT_SCRIPTS or name.startswith("loadtest.abuse"):
            continue
        mains = [node for node in ast.parse(text).body
                 if isinstance(node, ast.FunctionDef) and node.name == "main"]
        if not mains or [a.arg for a in mains[0].args.args] != ["argv"]:
            missing.append(name)
    assert missing == []


def test_every_abuse_probe_is_a_module_of_the_table_with_a_run():
    probes = PROBES
    on_disk = {p.stem for p in (ROOT / "loadtest" / "abuse").glob("*.py")} - {
        "__init__", "__main__", "common", "probes", "honest"}
    assert set(probes) == on_disk
    for name, probe in probes.items():
        assert inspect.iscoroutinefunction(probe.run), name


def test_the_abuse_suite_keeps_its_ray_driver_on_loopback():
    """Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when imported: the suite's package sets it
    before any probe imports ray (on a machine whose address is not loopback, the driver looked
    for its head's GCS at that address and waited for ever)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE")}
    found = subprocess.run(
        [sys.executable, "-c", "import sys, loadtest.abuse.__main__; assert 'ray' in sys.modules; "
         "from ray._private import ray_constants; print(ray_constants.ENABLE_RAY_CLUSTER)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert found.stdout.split() == ["False"], found.stderr
