"""Modules imported on first use: `import agents` must not pay for what a run may never call.

`import openai` builds every type of the whole OpenAI API, about half a second and a third of
paor's cold start; a command that never calls a model (`paor --help`, `paor replay`) need not pay
it. `lazy_module` hands out the module object at once (the standard library's `LazyLoader`) and
runs its body on the first attribute access: a client built, an error class matched in an
`except` clause (evaluated only when an exception is being handled).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["lazy_module"]


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
