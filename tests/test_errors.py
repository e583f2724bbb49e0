"""The error tree: one root, every exported error under it, and the tree drawn in `agents.errors`
exactly as the classes stand."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import agents
import agents.errors
import memory
import orchestrator
from agents import PaorError
from memory.journal import JournalError
from orchestrator.plans import PlanError

_DRAWN = re.compile(r"^(?P<indent>[│├└─ ]*)(?P<name>[A-Za-z]+)\b")


def _public_modules() -> list[ModuleType]:
    """Every module of agents, memory and orchestrator with no private part in its name."""
    found = []
    for package in (agents, memory, orchestrator):
        names = [package.__name__]
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
        found += [importlib.import_module(name) for name in names]
    return found


def _exported_errors() -> dict[str, type[BaseException]]:
    """Every exception class a public module exports, by name (one class per name)."""
    errors: dict[str, type[BaseException]] = {}
    for module in _public_modules():
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, BaseException):
                assert errors.setdefault(name, value) is value, f"two classes named {name}"
    return errors


def _blocks() -> list[list[str]]:
    """The fenced blocks of `agents.errors`' docstring, as lists of lines."""
    doc = agents.errors.__doc__ or ""
    return [block.strip("\n").splitlines() for block in doc.split("```")[1::2]]


def _tree() -> list[tuple[int, str]]:
    """The drawn tree: (depth, class name) per line, in order."""
    drawn = []
    for line in _blocks()[0]:
        found = _DRAWN.match(line)
        assert found, f"not a tree line: {line!r}"
        indent = found["indent"]
        assert len(indent) % 4 == 0, f"misaligned: {line!r}"
        drawn.append((len(indent) // 4, found["name"]))
    return drawn


def test_every_exported_error_is_a_paor_error() -> None:
    """Every exception class a public module of paor exports derives from PaorError."""
    strays = [name for name, cls in _exported_errors().items() if not issubclass(cls, PaorError)]
    assert strays == []


def test_the_root_is_one_class() -> None:
    """PaorError is one class, defined in memory and public from agents alone, and memory's
    errors derive from it."""
    from memory._errors import PaorError as root

    assert agents.PaorError is root
    assert "PaorError" not in agents.errors.__all__
    assert issubclass(JournalError, PaorError)
    assert issubclass(PlanError, agents.errors.RunError)


def test_the_tree_names_exactly_the_exported_errors() -> None:
    """The drawn tree names each exported error once, and no other."""
    names = [name for _, name in _tree()]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(_exported_errors())


def test_the_tree_is_drawn_as_the_classes_derive() -> None:
    """Each class in the drawn tree has exactly the parent it is drawn under."""
    errors = _exported_errors()
    parents: list[type[BaseException]] = []
    for depth, name in _tree():
        cls = errors[name]
        del parents[depth:]
        expected = tuple(parents[-1:]) or (Exception,)
        assert cls.__bases__ == expected, f"{name} is drawn under {expected}"
        parents.append(cls)


def test_every_public_paor_error_is_drawn() -> None:
    """No PaorError subclass with a public name is left out of the tree (an undrawn one would
    also be unexported); the private ones are internal signals."""
    drawn = {name for _, name in _tree()}
    pending, seen = [PaorError], set()
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if cls.__module__.split(".")[0] in {"agents", "memory", "orchestrator"}:
            seen.add(cls.__name__)
    assert {name for name in seen if not name.startswith("_")} == drawn


def test_each_error_is_where_the_docstring_says() -> None:
    """An error not in agents.errors is in the module its docstring names for it."""
    errors = _exported_errors()
    homes = {}
    for line in _blocks()[1]:
        module, names = line.split(maxsplit=1)
        homes.update(dict.fromkeys(names.split(", "), module))
    elsewhere = set(errors) - set(agents.errors.__all__)
    assert set(homes) == elsewhere
    for name, module in homes.items():
        assert getattr(importlib.import_module(module), name, None) is errors[name], module


@pytest.mark.parametrize("name", sorted(agents.errors.__all__))
def test_agents_errors_exports_errors(name: str) -> None:
    """agents.errors exports error classes only."""
    assert issubclass(getattr(agents.errors, name), PaorError)
