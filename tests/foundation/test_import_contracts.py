"""What the import contracts (pyproject.toml, run by `lint-imports` in `make test`) rest on.

import-linter checks imports; these check what imports alone cannot: that the contracts look at
every package of ours, and that no module but ``tournaments.queueing`` sends a task (a module
could send one through an object it was handed, without importing Celery).
"""

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Ours, but not code the contracts govern: they import everything on purpose.
NOT_GOVERNED = {"tests", "benchmarks"}
# Calls that send a Celery task (a signature, group or chord is sent by one of these too).
SENDING = {"delay", "apply_async", "send_task"}
SENDER = "tournaments/queueing.py"


def importlinter() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def our_packages() -> set[str]:
    return {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_GOVERNED and not path.parent.name.startswith(".")
    }


def test_the_contracts_look_at_every_package_of_ours():
    assert set(importlinter()["root_packages"]) == our_packages()


def test_every_contract_is_named_and_typed():
    contracts = importlinter()["contracts"]
    assert len({contract["name"] for contract in contracts}) == len(contracts)
    assert {contract["type"] for contract in contracts} >= {
        "forbidden",
        "protected",
        "layers",
        "acyclic_siblings",
    }


def sending_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name in SENDING:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}()")
    return found


def test_only_the_queueing_module_sends_tasks():
    calls = [
        call
        for package in sorted(our_packages())
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() != SENDER
        for call in sending_calls(path)
    ]

    assert calls == []
    assert sending_calls(ROOT / SENDER), "the sender itself must be found by this scan"


def is_module(name: str) -> bool:
    """Whether the dotted ``name`` is a module file of this repository."""
    return (ROOT / (name.replace(".", "/") + ".py")).exists()


def imported_test_modules(path: Path) -> list[str]:
    """The test modules (``test_*``) that ``path`` imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            named = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [node.module] + [name for name in named if is_module(name)]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [m for m in modules if m.split(".")[-1].startswith("test_")]
    return found


def test_no_test_module_imports_another():
    """What tests share lives in helper modules (``tests/*/servers.py``, ``helpers.py``, ...):
    a test module imported by another would have its tests run twice once a name starting
    with ``test`` is imported, and ties one file's tests to another's."""
    imports = {
        path.relative_to(ROOT).as_posix(): imported_test_modules(path)
        for path in sorted((ROOT / "tests").rglob("*.py"))
    }

    assert {path: found for path, found in imports.items() if found} == {}
