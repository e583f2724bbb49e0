"""The effect boundary: every model call, tool call, clock read and choice of a run, live or journaled."""

from agents._effects import (
    PLANNER_AGENT,
    RESERVED_AGENTS,
    RUN_AGENT,
    Addresses,
    AgentCall,
    Effects,
    EffectSite,
    LiveEffects,
)
from agents._journaled import Drift, JournaledEffects, JournalMode

__all__ = [
    "PLANNER_AGENT",
    "RESERVED_AGENTS",
    "RUN_AGENT",
    "Addresses",
    "AgentCall",
    "Drift",
    "EffectSite",
    "Effects",
    "JournalMode",
    "JournaledEffects",
    "LiveEffects",
]
