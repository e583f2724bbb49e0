"""Modules imported on first use: `import agents` must not pay for what a run may never call.

`import openai` builds every type of the whole OpenAI API, about half a second and a third of
paor's cold start; a command that never calls a model (`paor --help`, `paor replay`) need not pay
it. `lazy_module` hands out the module object at once (the standard library's `LazyLoader`) and
runs its body on the first attribute access: a client built, an error class matched in an
`except` clause (evaluated only when an exception is being handled).

`lazy_exports` does the same for a package's front door (`agents.models`): the names it exports
are imported from their homes on first use, so importing one private module of the package does
not import all the others, and none of them can meet a half-imported module of a lower room
through the door.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

__all__ = ["lazy_exports", "lazy_module"]


def lazy_module(name: str) -> ModuleType:
    """Module `name`, loaded now if it is loaded already, else on its first attribute access."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def lazy_exports(module: str, path: str) -> Callable[[str], object]:
    """A module `__getattr__` for the package `module` at `path`: each name that its
    `if TYPE_CHECKING:` block imports is imported from that home on first use, then kept.

    The block is the one list of what the package exports and from where: type checkers and
    documentation tools read it as plain imports, and this reads it for the interpreter, at the
    first name asked for (importing the package costs nothing).
    """

    @functools.cache
    def homes() -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for statement in node.body:
                    if isinstance(statement, ast.ImportFrom) and statement.module:
                        for alias in statement.names:
                            found[alias.asname or alias.name] = (statement.module, alias.name)
        return found

    def exported(name: str) -> object:
        if name not in homes():
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, original = homes()[name]
        value = getattr(importlib.import_module(home), original)
        setattr(sys.modules[module], name, value)
        return value

    return exported
