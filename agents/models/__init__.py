"""Models: what a `ChatModel` is asked and answers (for writing one's own), and the wrappers that
add retries, admission within an endpoint's rate limits, hedging and cache warming to any model;
and what their calls cost (`Price`, `PRICES`: see `Limits(max_cost=...)`).

This package is the model room. The protocol (`_model`: requests, responses, usage, `ChatModel`);
`OpenAIChatModel` (`_openai`) and what it speaks through: its transport (`_transport`, `_http`,
`_wire`), whole and streamed replies read (`_bodies`, `_chunks`, `_completion`), the JSON decision
protocol and tool calls written as text (`_decisions`, `_textcalls`); typed answers (`_output`,
`_dates`); the embedded model and its server process (`_local`, `_llama_server`); `open_model`
(`_endpoint`); the wrappers (`_wrappers`, `_admission`, `_hedge`, `_warm`); prices (`_prices`).

```python
admission = Admission()
model = stack(OpenAIChatModel("gpt-4.1-mini", rate_limits=admission), admission=admission)
mine = RetryingModel(MyModel(), max_retries=5)  # a model of one's own, retried the same way
```
"""

from typing import TYPE_CHECKING

from agents._lazy import lazy_exports

if TYPE_CHECKING:
    from agents.models._admission import Admission
    from agents.models._endpoint import seconds_of
    from agents.models._model import (
        ModelRequest,
        ModelResponse,
        OutputSchema,
        ToolSpec,
    )
    from agents.models._openai import DecisionProtocol
    from agents.models._output import OutputSpec
    from agents.models._prices import PRICES, Price
    from agents.models._warm import CacheWarming
    from agents.models._wrappers import (
        AdmittedModel,
        CacheWarmingModel,
        HedgedModel,
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
    "ModelRequest",
    "ModelResponse",
    "OutputSchema",
    "OutputSpec",
    "Price",
    "RetryingModel",
    "ToolSpec",
    "seconds_of",
    "stack",
    "unwrapped",
    "without_retries",
]

__getattr__ = lazy_exports(__name__, __file__)
