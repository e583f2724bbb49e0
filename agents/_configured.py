"""`Configured`: an object whose options are fixed when it is built; `clone()` makes a changed copy.

Executors and orchestrators are configuration, shared by every run they start. Assigning to one
after construction would change runs already under way, so it is refused; a variant is a new
object built from the same arguments but the changes (the OpenAI Agents SDK's `Agent.clone`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Self

from agents._errors import ConfigurationError

__all__ = ["Configured"]


class Configured:
    """Base of the frozen configuration objects. A subclass's `__init__` calls `_keep` with its
    arguments first and `_seal` last."""

    __sealed = False
    _given: Mapping[str, Any]

    def _keep(self, given: Mapping[str, Any]) -> None:
        """Remember the constructor's arguments, as `clone` needs them."""
        self._given = MappingProxyType(dict(given))

    def _seal(self) -> None:
        object.__setattr__(self, "_Configured__sealed", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__sealed:
            raise AttributeError(
                f"{type(self).__name__} is frozen: make a changed copy with "
                f".clone({name.lstrip('_')}=...)"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name} cannot be deleted")

    def clone(self, **changes: Any) -> Self:
        """A new object configured as this one but for `changes` (constructor arguments by
        name), e.g. `executor.clone(effects=journaled)`. A toolbox is shared, breakers and all.

        Raises:
            ConfigurationError: A change names no constructor argument.
        """
        unknown = sorted(set(changes) - set(self._given))
        if unknown:
            raise ConfigurationError(f"{type(self).__name__} has no option {', '.join(unknown)}")
        return type(self)(**{**self._given, **changes})
