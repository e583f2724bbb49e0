"""Schema binding: a model's near-miss arguments bound to the tool's own, when it is unambiguous.

A model writes `{"city": "Shanghai", "temp_unit": "c"}` for `get_weather(city, unit="celsius")`.
Refusing it costs a model turn; guessing wrong runs the wrong call. So paor binds only what has
exactly one reading, and says what it bound (the model reads it in the call's observation):

- **Names.** An argument that is not a parameter is bound to the one parameter not given yet
  that it names, by the first of these rules that finds any: the same name once case and
  separators (`_`, `-`, spaces, camelCase) are ignored (`City`, `max-price`, `maxPrice`); a
  name that holds the parameter's words whole and in order (`temp_unit` for `unit`); a name
  whose words the parameter's hold (`destination` for `destination_city`); a name one typo away
  (one letter added, dropped, changed or two swapped, for names of 4 letters or more: `ctiy`
  for `city`; never two, which would take `min_price` for `max_price`). Two or more candidates
  under one rule: nothing is bound, and the model is told which.
- **Values.** A string given for a parameter with fixed values (a `Literal` or an `Enum`) is
  bound to the value it names ignoring case (`"Celsius"`), or through the synonyms the tool
  declares (`@tool(synonyms={"unit": {"c": "celsius", "f": "fahrenheit"}})`). A value that names
  none is left for validation, whose error lists the allowed ones; so is any value of a
  parameter that also takes plain strings (`Literal["auto"] | str`: "AUTO" is valid as it is).
- **Defaults** are filled by the tool's own signature, as always.

Everything else (a missing required argument, a wrong type) is an error the model reads, as
before. The call that runs, journaled and replayed, is the bound one.
"""

from __future__ import annotations

import enum
import functools
import re
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

__all__ = ["Ambiguous", "bind_arguments"]

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


class Ambiguous(ValueError):
    """An argument that could be bound to more than one parameter (the model reads why)."""


def bind_arguments(
    model: type[BaseModel],
    raw: dict[str, Any],
    synonyms: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`raw` with near-miss names and values bound to `model`'s fields, and what was bound.

    Raises:
        Ambiguous: An argument names more than one parameter.
    """
    fields = model.model_fields
    fixed = _fixed_values(model)
    if not synonyms and all(k in fields for k in raw) and not fixed.keys() & raw.keys():
        return raw, ()  # the usual call: nothing could be bound (no copy, no introspection)
    bound: list[str] = []
    named = dict(raw)
    for key in [k for k in raw if k not in fields]:
        target = _one_parameter(key, [f for f in fields if f not in named])
        if target is not None:
            named[target] = named.pop(key)
            bound.append(f"{key}→{target}")
    for name, value in list(named.items()):
        if name not in fields or not isinstance(value, str):
            continue
        chosen = _one_value(value, fixed.get(name, []), (synonyms or {}).get(name, {}))
        if chosen is not None and chosen != value:
            named[name] = chosen
            bound.append(f"{name} {value!r}→{_shown(chosen)!r}")
    return named, tuple(bound)


@functools.cache
def _fixed_values(model: type[BaseModel]) -> dict[str, list[Any]]:
    """The fields of `model` with fixed values, and those values: worked out once per tool (a
    tool's arguments are parsed on every call)."""
    found = {name: _choices(field.annotation) for name, field in model.model_fields.items()}
    return {name: choices for name, choices in found.items() if choices}


def _one_parameter(key: str, free: list[str]) -> str | None:
    """The one free parameter `key` names (see the module), None if none does."""
    for rule in (_same, _contains, _within, _close):
        found = [f for f in free if rule(key, f)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise Ambiguous(
                f"argument {key!r} could be any of {', '.join(sorted(found))}: use the exact name"
            )
    return None


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _same(key: str, field: str) -> bool:
    return "".join(_words(key)) == "".join(_words(field))


def _contains(key: str, field: str) -> bool:
    """Whether the field's words appear, in order and whole, among the key's."""
    mine, wanted = _words(key), _words(field)
    n = len(wanted)
    return 0 < n < len(mine) and any(mine[i : i + n] == wanted for i in range(len(mine) - n + 1))


def _within(key: str, field: str) -> bool:
    """Whether the key's words appear, in order and whole, among the field's."""
    return _contains(field, key)


def _close(key: str, field: str) -> bool:
    """Whether the names are a typo or two apart (see the module)."""
    a, b = "".join(_words(key)), "".join(_words(field))
    allowed = 1 if len(b) >= 4 else 0
    return allowed > 0 and abs(len(a) - len(b)) <= allowed and _edits(a, b) <= allowed


def _edits(a: str, b: str) -> int:
    """The optimal-string-alignment distance: insertions, deletions, changes, swaps."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            best = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                best = min(best, rows[-2][j - 2] + 1)
            row.append(best)
        rows.append(row)
    return rows[-1][-1]


def _choices(annotation: Any) -> list[Any]:
    """The fixed values a field takes (of a `Literal`, an `Enum`, or either inside `Optional`)."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return list(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return list(typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(annotation)
        if str in members:
            return []  # any string is valid as it is: nothing to bind
        return [c for arg in members for c in _choices(arg)]
    return []


def _one_value(value: str, choices: list[Any], synonyms: Mapping[str, Any]) -> Any | None:
    """The choice `value` names: itself, a synonym the tool declares, or one ignoring case."""
    if not choices and not synonyms:
        return None
    plain = [_shown(c) for c in choices]
    if value in plain:
        return None
    for given, meant in synonyms.items():
        if given.lower() == value.lower():
            return meant
    found = [c for c, p in zip(choices, plain, strict=True) if str(p).lower() == value.lower()]
    return _shown(found[0]) if len(found) == 1 else None


def _shown(choice: Any) -> Any:
    return choice.value if isinstance(choice, enum.Enum) else choice
