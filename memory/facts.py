"""Long-term facts: what they are, how they merge, how they are shown to a model."""

from memory._facts import Fact, FactKind

__all__ = [
    "Fact",
    "FactKind",
]
