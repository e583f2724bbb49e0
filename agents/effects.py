"""The effect boundary: every model call, tool call, clock read and choice of a run, live or journaled."""

from agents._effects import (
    Addresses,
    AgentCall,
    Effects,
    EffectSite,
    LiveEffects,
    ReservedAgent,
)
from agents._journaled import Drift, JournaledEffects, JournalMode

__all__ = [
    "Addresses",
    "AgentCall",
    "Drift",
    "EffectSite",
    "Effects",
    "JournalMode",
    "JournaledEffects",
    "LiveEffects",
    "ReservedAgent",
]
