"""The error tree, split by who must act."""

from agents._errors import (
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
    PlanError,
    ReplayDrift,
    ReplayedCancellation,
    RunError,
)

__all__ = [
    "MalformedResponse",
    "ModelError",
    "ModelRequestError",
    "ModelRetryableError",
    "PlanError",
    "ReplayDrift",
    "ReplayedCancellation",
    "RunError",
]
