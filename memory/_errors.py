"""The root of paor's error tree, kept in the bottom layer so that every layer can derive from it.

The whole tree, and who must act on each error, is drawn once, in `agents.errors`.
"""

__all__ = ["PaorError"]


class PaorError(Exception):
    """The root of every error paor raises on purpose: catch it to catch them all."""
