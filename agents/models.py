"""Models: what a `ChatModel` is asked and answers (for writing one's own), and the wrappers that
add retries, admission within an endpoint's rate limits, hedging and cache warming to any model;
and what their calls cost (`Price`, `PRICES`: see `Limits(max_cost=...)`).

```python
admission = Admission()
model = stack(OpenAIChatModel("gpt-4.1-mini", rate_limits=admission), admission=admission)
mine = RetryingModel(MyModel(), max_retries=5)  # a model of one's own, retried the same way
```
"""

from agents._admission import Admission
from agents._endpoint import seconds_of
from agents._hedge import Hedging
from agents._local import local_model_available
from agents._model import ModelRequest, ModelResponse, OutputSchema, RequestPurpose, ToolSpec
from agents._openai import DecisionProtocol
from agents._output import OutputSpec, Written, write_object
from agents._prices import PRICES, Price, price_of
from agents._warm import CacheWarming
from agents._wire import OutputMode
from agents._wrappers import (
    AdmittedModel,
    CacheWarmingModel,
    HedgedModel,
    ModelWrapper,
    RetryingModel,
    stack,
    unwrapped,
    without_retries,
)

__all__ = [
    "PRICES",
    "Admission",
    "AdmittedModel",
    "CacheWarming",
    "CacheWarmingModel",
    "DecisionProtocol",
    "HedgedModel",
    "Hedging",
    "ModelRequest",
    "ModelResponse",
    "ModelWrapper",
    "OutputMode",
    "OutputSchema",
    "OutputSpec",
    "Price",
    "RequestPurpose",
    "RetryingModel",
    "ToolSpec",
    "Written",
    "local_model_available",
    "price_of",
    "seconds_of",
    "stack",
    "unwrapped",
    "without_retries",
    "write_object",
]
