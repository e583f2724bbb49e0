"""The simulator: a scripted, OpenAI-compatible model with a seeded latency model and exact accounting.

One `Simulator` serves one benchmark run, over HTTP or in process (`benchmarks._endpoints`). For
every request it

- works out who is asking (`classify`): a plan or replan request carries a `response_format` named
  "plan" or "replan"; a sub-agent's request carries tools and opens with `Task: [sub:ID]`; a single
  ReAct agent's with `Task: [goal:ID]`, and a single agent's that makes parallel tool calls with
  `Task: [par:ID]`; a synthesis request has neither tools nor a format;
- asks the scenario's `Script` for the reply (the step is the number of assistant turns so far; a
  planner asked to write the longest chains first, as paor's streamed plan asks, writes its plan in
  that order, `Scenario.chains_first`);
- counts tokens exactly with its own tokenizer (`tokens`: runs of word characters or of punctuation),
  and finds the longest prefix the prompt shares with any earlier request of the run, as a prompt
  cache would see it (`PrefixIndex`); that prefix is reported as `cached_tokens`;
- answers when the latency the seeded `LatencyModel` gives the request's key (time to first token
  plus decode time per completion token) has passed since the request arrived, so a run's latencies
  do not depend on arrival order, and its own work, done inside that time after letting other
  callers in, is not charged to the framework; the wait is kept by `benchmarks._clock`, on time to
  a few tenths of a millisecond where the event loop's timers round up to the next millisecond;
- may inject a fault (`Faults`): an HTTP status, a hang, or a malformed body;
- notes how much of each tool result reached a prompt, and in scenarios that check facts, which
  looked-up facts each prompt carried (`benchmarks._facts`).

Every exchange is logged with its timestamps, so the figures are computed from one log whatever the
framework under test.
"""

from __future__ import annotations

import functools
import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio
import anyio.lowlevel

from agents.models import ModelRequest
from agents.models._openai import to_wire
from benchmarks._clock import sleep_until
from benchmarks._facts import PLACEHOLDER, Reading, facts_in, restate, with_fact
from benchmarks._prefix import PrefixIndex
from benchmarks._provider import CACHE_RULES, CacheRules, RateLimiter, RateLimits

__all__ = [
    "Exchange",
    "Fault",
    "Faults",
    "LatencyModel",
    "Reply",
    "Script",
    "SimRequest",
    "Simulator",
    "ToolExchange",
    "Who",
    "classify",
    "context_error",
    "count_tokens",
    "tokens",
]

_TOKEN = re.compile(r"\w+|[^\w\s]+")
_MARKER = re.compile(r"^Task: \[(sub|goal|par):([\w.\-]+)\]")
Kind = Literal["plan", "replan", "agent", "mono", "par", "synthesis"]


def tokens(text: str) -> list[str]:
    """The simulator's tokens of `text`: runs of word characters, or runs of punctuation."""
    return _TOKEN.findall(text)


def count_tokens(text: str) -> int:
    """How many simulator tokens `text` has."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyModel:
    """Seeded latencies: each depends only on the seed, the request's key and its completion length.

    Attributes:
        seed: Seeds every jitter draw.
        ttft_s: Median time to first token of a model call.
        per_token_s: Decode time per completion token.
        tool_s: Median duration of a tool call.
        jitter: Sigma of the log-normal jitter applied to time to first token and tool time.
        prefill_s: Time to first token added per prompt token the provider has not cached.
        tail_p: The share of model and tool calls that are stragglers (a heavy tail: a queue
            at the provider, a slow page), drawn per key like the jitter.
        tail_x: How many times longer a straggler's time to first token, or tool time, is.
    """

    seed: int = 0
    ttft_s: float = 0.08
    per_token_s: float = 0.002
    tool_s: float = 0.04
    jitter: float = 0.2
    prefill_s: float = 0.0
    tail_p: float = 0.0
    tail_x: float = 1.0

    def model_call(
        self, key: str, completion_tokens: int, slow: float = 1.0, uncached_tokens: int = 0
    ) -> float:
        """Seconds a model call with this key takes to answer, its uncached prompt prefilled."""
        if self.ttft_s == 0 and self.per_token_s == 0:
            return 0.0
        ttft = self.ttft_s * self._jitter(f"model:{key}") + self.prefill_s * uncached_tokens
        return slow * (ttft + self.per_token_s * completion_tokens)

    def decode_s(self, completion_tokens: int, slow: float = 1.0) -> float:
        """The part of a model call's seconds spent writing its completion, after the first token."""
        return slow * self.per_token_s * completion_tokens

    def tool_call(self, key: str, slow: float = 1.0) -> float:
        """Seconds a tool call with this key takes."""
        return 0.0 if self.tool_s == 0 else slow * self.tool_s * self._jitter(f"tool:{key}")

    def _jitter(self, key: str) -> float:
        draw = _lognormal(f"{self.seed}:{key}", self.jitter)
        if self.tail_p and _uniform(f"{self.seed}:tail:{key}") < self.tail_p:
            return draw * self.tail_x
        return draw


@functools.lru_cache(maxsize=1 << 16)
def _lognormal(seed: str, sigma: float) -> float:
    # Seeding a generator from a string costs tens of microseconds on the shared event loop; every
    # framework asks for the same keys, so each draw is made once.
    return random.Random(seed).lognormvariate(0.0, sigma)


@functools.lru_cache(maxsize=1 << 16)
def _uniform(seed: str) -> float:
    return random.Random(seed).random()


ZERO_LATENCY = LatencyModel(ttft_s=0.0, per_token_s=0.0, tool_s=0.0)


@dataclass(frozen=True, slots=True)
class Who:
    """Who is asking: the kind of request, the subtask or goal id, and the step (assistant turns)."""

    kind: Kind
    name: str
    step: int
    calls: tuple[str, ...] = ()  # the written-out calls a planner's schema has (not in the key)
    chains: bool = False  # a planner asked to write the longest chains first (not in the key)
    finishes: bool = False  # a sub-agent offered paor's `answer_with_results` tool (not in the key)

    @property
    def key(self) -> str:
        """The request's key for latencies and faults, e.g. "agent:s1:0"."""
        return f"{self.kind}:{self.name}:{self.step}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A scripted answer: text, tool calls as (name, JSON arguments), or both."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()

    @property
    def completion_tokens(self) -> int:
        """The tokens the reply costs to decode."""
        said = count_tokens(self.content or "")
        return said + sum(count_tokens(n) + count_tokens(a) for n, a in self.tool_calls)


class Script(Protocol):
    """A scenario's behaviour: the reply to each request, and how slow each requester is."""

    def reply(self, who: Who) -> Reply:
        """The reply to a request from `who`."""
        ...

    def slow(self, who: Who) -> float:
        """A latency multiplier for `who` (stragglers are slower than 1)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SimRequest:
    """A chat request in wire form (OpenAI chat completions), whatever transport brought it."""

    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    response_format: Mapping[str, Any] | None = None
    stream: bool = False

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> SimRequest:
        """The request in an HTTP body."""
        return cls(
            messages=body.get("messages", []),
            tools=body.get("tools") or (),
            response_format=body.get("response_format"),
            stream=body.get("stream") is True,
        )

    @classmethod
    def from_model_request(cls, request: ModelRequest) -> SimRequest:
        """The request paor's OpenAI adapter would send for `request` (native tool calls)."""
        tools = [{"type": "function", "function": t.model_dump()} for t in request.tools]
        fmt = None
        if request.output is not None:
            schema = {
                "name": request.output.name,
                "schema": request.output.schema_,
                "strict": False,
            }
            fmt = {"type": "json_schema", "json_schema": schema}
        return cls(
            messages=[to_wire(m) for m in request.messages], tools=tools, response_format=fmt
        )

    @property
    def format_name(self) -> str | None:
        """The name of the requested JSON schema, if any: its `name`, or for a framework that names
        every schema alike (the OpenAI Agents SDK's "final_output") the schema's lowercased title."""
        if not self.response_format:
            return None
        spec = self.response_format.get("json_schema", {})
        name = str(spec.get("name", ""))
        title = str((spec.get("schema") or {}).get("title", "")).lower()
        return (title if title in ("plan", "replan") else name) or None

    @property
    def takes_calls(self) -> tuple[str, ...]:
        """The tool calls the requested plan schema lets a subtask have written out (paor's
        `direct_calls`): "call" (the subtask is that call) and "first_call" (its agent starts
        with it), as its subtask definition has those properties."""
        spec = (self.response_format or {}).get("json_schema", {}).get("schema") or {}
        fields = spec.get("$defs", {}).get("SubtaskDraft", {}).get("properties", {})
        return tuple(f for f in ("call", "first_call") if f in fields)

    @property
    def offers_finish(self) -> bool:
        """Whether a sub-agent may end with its tool results as its answer (paor's
        `answer_with_results` tool, `RunConfig.pass_results`)."""
        return any(_tool_name(t) == "answer_with_results" for t in self.tools)

    @property
    def asks_chains_first(self) -> bool:
        """Whether the planner is asked to write first the subtasks that begin the longest
        chains (paor's `CHAINS_FIRST`, sent when its plan streams)."""
        return any("longest chains" in _text(m.get("content")) for m in self.messages)

    def texts(self) -> list[str]:
        """The prompt as a cache sees it: the tools and format first, then each message."""
        out: list[str] = []
        if self.tools or self.response_format:
            head = {"tools": list(self.tools), "response_format": self.response_format}
            out.append(json.dumps(head, sort_keys=True, separators=(",", ":")))
        out += [render(m) for m in self.messages]
        return out

    def segments(self) -> list[tuple[str, ...]]:
        """`texts`, tokenized."""
        return [tuple(tokens(t)) for t in self.texts()]


def render(message: Mapping[str, Any]) -> str:
    """A wire message as prompt text: role marker, content, then each tool call (ids are not shown)."""
    parts = [f"<|{message.get('role', '')}|>", _text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(parts)


def _tool_name(spec: Any) -> str:
    """The name of a tool in a request's tools (OpenAI's wire form)."""
    function = spec.get("function") if isinstance(spec, Mapping) else None
    return str(function.get("name", "")) if isinstance(function, Mapping) else ""


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(content)


def classify(request: SimRequest) -> Who:
    """Who sent `request` (see the module docstring for the dispatch rules)."""
    step = sum(1 for m in request.messages if m.get("role") == "assistant")
    name = request.format_name
    if name in ("plan", "replan"):
        planning: Kind = "plan" if name == "plan" else "replan"
        return Who(planning, "", 0, request.takes_calls, request.asks_chains_first)
    first = next((m for m in request.messages if m.get("role") == "user"), None)
    found = _MARKER.match(_text(first.get("content"))) if first is not None else None
    if request.tools and found is not None:
        kind: Kind = {"sub": "agent", "goal": "mono", "par": "par"}[found.group(1)]  # type: ignore[assignment]
        return Who(kind, found.group(2), step, finishes=request.offers_finish)
    return Who("synthesis", "", 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One injected failure: an HTTP status (with an optional Retry-After), a hang, or bad JSON."""

    kind: Literal["status", "hang", "malformed"] = "status"
    code: int = 500
    retry_after: float | None = None
    seconds: float = 3600.0
    headers: tuple[tuple[str, str], ...] = ()
    body: Mapping[str, Any] | None = None  # a status's JSON body, as the provider words it


@dataclass(kw_only=True, slots=True)
class Faults:
    """Which requests fail: scripted faults by request key (played once each, in order), a
    seeded random rate of transient 503s, and a share of requests that hang, drawn per arrival
    number (whether the n-th request of a run hangs does not depend on the framework)."""

    by_key: dict[str, list[Fault]] = field(default_factory=dict)
    rate: float = 0.0
    seed: int = 0
    hang_share: float = 0.0
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def take(self, key: str, arrival: int = 0) -> Fault | None:
        """The fault for this attempt at `key`, the run's `arrival`-th request, if any."""
        queued = self.by_key.get(key)
        if queued:
            return queued.pop(0)
        if self.hang_share and _uniform(f"{self.seed}:hang:{arrival}") < self.hang_share:
            return Fault(kind="hang")
        if self.rate and self._rng.random() < self.rate:
            return Fault(code=503, retry_after=0.0)
        return None


@dataclass(kw_only=True, slots=True)
class Exchange:
    """One model request as the simulator saw it (times are `time.perf_counter()` seconds).

    `shared_tokens` is the exact prefix shared with any earlier request (a property of the prompts);
    `cached_tokens` is what the provider caches of it under `CacheRules` (what is billed as cached).
    """

    who: Who
    received: float
    answered: float = 0.0
    latency: float = 0.0
    stream_s: float = 0.0  # a streamed reply: seconds from its first event to its last
    prompt_tokens: int = 0
    completion_tokens: int = 0
    shared_tokens: int = 0
    cached_tokens: int = 0
    fault: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    facts: frozenset[str] | None = None  # the looked-up facts its prompt carried (S13)


@dataclass(kw_only=True, slots=True)
class ToolExchange:
    """One simulated tool call."""

    key: str
    started: float
    finished: float
    latency: float


class Simulator:
    """The scripted model of one run: replies, latencies, accounting, faults and the log.

    Args:
        script: The scenario's behaviour.
        latency: The latency model.
        faults: Injected failures (none by default).
        tool_tokens: The length of each tool result, in tokens, or a function from the call's
            key to it.
        limits: The provider's rate limits (none by default).
        cache: The provider's prompt caching rules.
        context_window: The most prompt tokens a request may carry; a longer one is refused with
            OpenAI's 400 `context_length_exceeded` (no limit by default).
        facts: Each tool result ends with the fact it was looked up for, and a reply saying
            `{facts}` restates the facts of its prompt (`benchmarks._facts`).
    """

    def __init__(
        self,
        script: Script,
        latency: LatencyModel = ZERO_LATENCY,
        *,
        faults: Faults | None = None,
        tool_tokens: int | Callable[[str], int] = 40,
        limits: RateLimits | None = None,
        cache: CacheRules = CACHE_RULES,
        context_window: int | None = None,
        facts: bool = False,
    ) -> None:
        self.script = script
        self.facts = facts
        self.reading = Reading()
        self.latency = latency
        self.faults = faults or Faults()
        self.tool_tokens = tool_tokens
        self.cache = cache
        self.context_window = context_window
        self.limiter = None if limits is None else RateLimiter(limits, time.perf_counter())
        self.log: list[Exchange] = []
        self.tools: list[ToolExchange] = []
        self._prefix = PrefixIndex()
        self._cached = PrefixIndex()
        self._counts: dict[str, int] = {}
        self._numbers: dict[tuple[str, int], int] = {}
        self._attempts: dict[str, int] = {}
        self._token_cache: dict[str, tuple[str, ...]] = {}

    async def complete(
        self, request: SimRequest, received: float | None = None
    ) -> tuple[Reply, Exchange] | Fault:
        """Answer one request `latency` seconds after it was received, or return its fault.

        The simulator's own work (classifying, tokenizing, prefix matching) happens inside that
        latency, after a yield, as a server's does inside its time to first token, so it is not
        counted against the framework under test. `received` is the `time.perf_counter()` of the
        request's arrival, when the caller took it earlier (default: now).
        """
        received = time.perf_counter() if received is None else received
        # A server takes a request the moment it is sent and works on it while other callers
        # send theirs: yield first, so a burst of callers is not queued behind this bookkeeping.
        await anyio.lowlevel.checkpoint()
        who = self._number(classify(request), request)
        exchange = Exchange(who=who, received=received)
        self.log.append(exchange)
        # A retry or a hedge of a request is another draw of its latency (another replica, another
        # queue); the first attempt's is the one the critical path counts.
        attempt = self._attempts.get(who.key, 0)
        self._attempts[who.key] = attempt + 1
        fault = self.faults.take(who.key, len(self.log) - 1)
        if fault is not None:
            exchange.fault, exchange.answered = fault.kind, time.perf_counter()
            return fault
        reply = self.script.reply(who)
        exchange.prompt_tokens, exchange.shared_tokens = self.account(request)
        texts = request.texts()
        segments = [self._tokens(text) for text in texts]
        self.reading.observe(texts)
        if self.facts:
            exchange.facts = facts_in(texts)
            if reply.content and PLACEHOLDER in reply.content:
                reply = Reply(
                    content=restate(reply.content, exchange.facts), tool_calls=reply.tool_calls
                )
        exchange.completion_tokens = reply.completion_tokens
        window = self.context_window
        if window is not None and exchange.prompt_tokens > window:
            exchange.fault, exchange.answered = "context", time.perf_counter()
            return Fault(code=400, body=context_error(window, exchange.prompt_tokens))
        if self.limiter is not None:
            now = time.perf_counter()
            wait = self.limiter.take(exchange.prompt_tokens + exchange.completion_tokens, now)
            if wait is not None:
                exchange.fault, exchange.answered = "429", now
                headers = self.limiter.refusal_headers(wait, now)
                return Fault(code=429, retry_after=wait, headers=tuple(headers.items()))
        exchange.cached_tokens = self.cache.cached(self._cached.match(segments, received))
        exchange.latency = self.latency.model_call(
            who.key if not attempt else f"{who.key}#{attempt}",
            exchange.completion_tokens,
            self.script.slow(who),
            exchange.prompt_tokens - exchange.cached_tokens,
        )
        self._cached.add(segments, received + exchange.latency)
        if request.stream:  # the first event at the first token, the rest paced by the server
            exchange.stream_s = self.latency.decode_s(
                exchange.completion_tokens, self.script.slow(who)
            )
            await sleep_until(received + exchange.latency - exchange.stream_s)
            exchange.answered = received + exchange.latency
        else:
            await sleep_until(received + exchange.latency)
            exchange.answered = time.perf_counter()
        if self.limiter is not None:  # as they stand when the headers leave (a stream's: now)
            exchange.headers = tuple(self.limiter.headers(time.perf_counter()).items())
        return reply, exchange

    def account(self, request: SimRequest) -> tuple[int, int]:
        """The prompt tokens of `request`, and how many of them lead an earlier prompt too."""
        segments = [self._tokens(text) for text in request.texts()]
        return sum(len(s) for s in segments), self._prefix.observe(segments)

    def _tokens(self, text: str) -> tuple[str, ...]:
        # Each message is re-sent with every later request: tokenize it once, so the simulator's
        # own work (which shares the event loop with the framework under test) stays small.
        found = self._token_cache.get(text)
        if found is None:
            found = self._token_cache[text] = tuple(tokens(text))
        return found

    async def tool(self, key: str, slow: float = 1.0) -> str:
        """Run the simulated tool call `key`: its result text, `latency` seconds after the call."""
        started = time.perf_counter()
        latency = self.latency.tool_call(key, slow)
        size = self.tool_tokens if isinstance(self.tool_tokens, int) else self.tool_tokens(key)
        text = tool_text(key, size)
        if self.facts:
            text = with_fact(text, key)
        await sleep_until(started + latency)
        self.tools.append(
            ToolExchange(key=key, started=started, finished=time.perf_counter(), latency=latency)
        )
        return text

    def _number(self, who: Who, request: SimRequest) -> Who:
        """Planner and synthesis requests are numbered in arrival order (plan:0, replan:1, ...);
        the same request asked again (a retry, a hedge) keeps its number."""
        if who.kind in ("agent", "mono", "par"):
            return who
        ident = (who.kind, hash(tuple(request.texts())))
        n = self._numbers.get(ident)
        if n is None:
            n = self._numbers[ident] = self._counts.get(who.kind, 0)
            self._counts[who.kind] = n + 1
        return Who(who.kind, who.name, n, who.calls, who.chains)


@functools.lru_cache(maxsize=1 << 14)
def tool_text(key: str, size: int) -> str:
    """The deterministic result of tool call `key`: `size` tokens (made once per key and size)."""
    rng = random.Random(key)
    words = [f"w{rng.randrange(10_000)}" for _ in range(max(0, size - 2))]
    return f"{key}: {' '.join(words)}"


def context_error(window: int, prompt_tokens: int) -> dict[str, Any]:
    """OpenAI's body for a prompt over the model's context window (HTTP 400)."""
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
    )
    error = {"message": message, "type": "invalid_request_error", "param": "messages"}
    return {"error": error | {"code": "context_length_exceeded"}}
