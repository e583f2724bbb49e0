"""The layers: the orchestrator enters agents and memory by their public doors only, and what the
doors export is there, each name from one home."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

import agents
import memory
import orchestrator

_LOWER = ("agents", "memory")
_ORCHESTRATOR = Path(orchestrator.__file__).parent
# Private imports in modules that another change is rewriting (by path under orchestrator/).
_NOT_YET: set[tuple[str, str]] = set()  # none left
# The error tree's root is exported on purpose by the front door, the tree's module and its home.


def _private_imports(source: str) -> list[str]:
    """The private modules of agents or memory that `source` imports, in any form."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _private(node.module):
                found.append(node.module)
            elif node.module.split(".")[0] in _LOWER:  # `from agents.models import _openai`
                names = (alias.name for alias in node.names if alias.name.startswith("_"))
                found += [f"{node.module}.{name}" for name in names]
    return found


def _private(module: str) -> bool:
    """Whether `module` is agents or memory's and has a private part (`agents._waits`)."""
    top, *rest = module.split(".")
    return top in _LOWER and any(part.startswith("_") for part in rest)


def _public_modules(package: ModuleType) -> list[ModuleType]:
    """The package's front door and every submodule with no private part in its name."""
    names = [package.__name__]
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return [importlib.import_module(name) for name in names]


_PACKAGES = (agents, memory, orchestrator)
_MAX_LINES = 450
# The public surface (every public module's `__all__`, `testing` and `temporal` included), held
# where it stands so that it can only shrink; the goal is 150.
_MAX_PUBLIC_NAMES = 175


def _library_files() -> list[Path]:
    return [
        path
        for package in _PACKAGES
        for path in sorted(Path(str(package.__file__)).parent.rglob("*.py"))
    ]


def _orchestrator_files() -> list[Path]:
    return sorted(_ORCHESTRATOR.rglob("*.py"))


def test_the_check_sees_every_form_of_a_private_import() -> None:
    """Module, name, nested, aliased and lazy imports of a private module are all found."""
    source = (
        "import agents._waits\n"
        "from agents import _telemetry as telemetry, Executor\n"
        "from memory._journal import Journal\n"
        "from agents.testing._scripted import call\n"
        "def f():\n"
        "    from agents.mcp._mcp_config import MCPServers\n"
        "from agents.models import _openai, stack\n"
        "from agents.approvals import RunWaits\n"
        "from . import _run\n"
    )
    assert _private_imports(source) == [
        "agents._waits",
        "agents._telemetry",
        "memory._journal",
        "agents.testing._scripted",
        "agents.models._openai",
        "agents.mcp._mcp_config",  # nested: found after the module's own
    ]


@pytest.mark.parametrize(
    "path", _orchestrator_files(), ids=lambda p: str(p.relative_to(_ORCHESTRATOR))
)
def test_the_orchestrator_imports_no_private_module_of_agents_or_memory(path: Path) -> None:
    """Every orchestrator module takes what it needs from agents and memory's public modules."""
    where = str(path.relative_to(_ORCHESTRATOR))
    found = [m for m in _private_imports(path.read_text()) if (where, m) not in _NOT_YET]
    assert not found, f"orchestrator/{where} imports {', '.join(found)}"


def _imported(source: str) -> set[str]:
    """The top-level packages `source` imports, in any form (lazy imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_each_layer_imports_only_those_below_it() -> None:
    """memory imports neither agents nor orchestrator, agents does not import orchestrator: what
    a lower layer's helpers need of a higher one lives in the higher one (the planner's reply
    builders are `orchestrator.testing`, not `agents.testing`)."""
    above = {"memory": {"agents", "orchestrator"}, "agents": {"orchestrator"}}
    reaching = [
        f"{path.relative_to(_ORCHESTRATOR.parent)} imports {', '.join(sorted(wrong))}"
        for package in (agents, memory)
        for path in sorted(Path(str(package.__file__)).parent.rglob("*.py"))
        if (wrong := _imported(path.read_text()) & above[package.__name__])
    ]
    assert not reaching


@pytest.mark.parametrize(
    "module",
    [m for package in (agents, memory) for m in _public_modules(package)],
    ids=lambda m: m.__name__,
)
def test_every_public_name_of_agents_and_memory_resolves(module: ModuleType) -> None:
    """A public module's `__all__` lists each name once, and only names it has."""
    exported = module.__all__
    assert len(set(exported)) == len(exported), f"{module.__name__} lists a name twice"
    missing = [name for name in exported if not hasattr(module, name)]
    assert not missing, f"{module.__name__} exports {missing}, which it does not have"


def test_each_public_name_has_one_home() -> None:
    """No name is exported by two public modules."""
    homes: dict[str, list[str]] = defaultdict(list)
    for package in (agents, memory, orchestrator):
        for module in _public_modules(package):
            for name in module.__all__:
                homes[name].append(module.__name__)
    shared = {name: where for name, where in homes.items() if len(where) > 1}
    assert not shared, shared


def test_only_the_journal_asks_whether_it_is_replaying() -> None:
    """Loops and other effects ask the boundary what it allows (`obeys_stops`, `time_limit`),
    never whether it is replaying: that is the journal's own business."""
    asking = [
        str(path)
        for path in _library_files()
        if path.name != "_journaled.py" and ".replaying(" in path.read_text()
    ]
    assert not asking


def test_no_module_is_over_450_lines() -> None:
    """A module longer than that does more than one thing: split it by what its parts are for."""
    long = {}
    for path in _library_files():
        lines = len(path.read_text().splitlines())
        if lines > _MAX_LINES:
            long[str(path)] = lines
    assert not long


def test_every_package_opens_by_saying_what_lives_there() -> None:
    """Each room of the three packages (a package or subpackage) has a docstring."""
    silent = [
        str(path)
        for path in _library_files()
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not silent


def test_the_public_surface_does_not_grow() -> None:
    names = [
        name
        for package in _PACKAGES
        for module in _public_modules(package)
        for name in module.__all__
    ]
    assert len(names) <= _MAX_PUBLIC_NAMES, f"{len(names)} public names; keep new ones private"
