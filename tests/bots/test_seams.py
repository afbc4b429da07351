"""bots/ imports `rules` and the standard library only (docs/architecture.md, "Packages")."""
import sys

from tests.test_layout import imports


def test_bots_import_only_rules_and_the_standard_library():
    offending = [f"{where}: {module}" for where, module, _ in imports("bots")
                 if module.split(".")[0] not in {"bots", "rules", *sys.stdlib_module_names}]
    assert offending == []
