"""What a `ChatModel` is asked and answers, for writing one's own model."""

from agents._admission import Admission
from agents._endpoint import seconds_of
from agents._hedge import Hedging
from agents._local import local_model_available
from agents._model import ModelRequest, ModelResponse, OutputSchema, RequestPurpose, ToolSpec
from agents._openai import DecisionProtocol
from agents._warm import CacheWarming

__all__ = [
    "Admission",
    "CacheWarming",
    "DecisionProtocol",
    "Hedging",
    "ModelRequest",
    "ModelResponse",
    "OutputSchema",
    "RequestPurpose",
    "ToolSpec",
    "local_model_available",
    "seconds_of",
]
