"""Tools: `@tool`, their schemas, argument validation, and one guarded invocation.

A `Tool` wraps a sync or async function. Its argument schema comes from the type hints and the
Google-style docstring through pydantic. `Tool.execute` is the only place user tool code runs: it
applies the timeout and turns every exception into a `ToolOutcome`, so a tool can never crash a loop.
Everything else about a call (lookup, breakers, success checks, shaping) is deterministic loop code in
`_toolbox`, which keeps replays exact.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_type_hints, overload

import anyio
import anyio.to_thread
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PydanticUserError,
    StrictBool,
    ValidationError,
    create_model,
)
from pydantic_core import to_jsonable_python

from agents._binding import bind_arguments
from agents._errors import ConfigurationError, ToolFailure
from agents.models._model import ToolSpec

__all__ = ["MAX_ARG_CHARS", "Tool", "ToolContext", "ToolOutcome", "tool"]

MAX_ARG_CHARS = 65_536
"""The default limit on a call's raw JSON arguments, in characters. A call is re-sent with every
later request, logged and journaled, so a runaway model writing megabytes of arguments would
cost far more than the one refused call; a tool that takes whole files raises it."""
_MAX_ERROR_CHARS = 300
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")

ErrorKind = Literal[
    "unknown_tool",
    "malformed_arguments",
    "invalid_arguments",
    "unavailable",
    "timeout",
    "failed",
    "bad_call",
    "crashed",
    "rejected",
    "cancelled",
    "skipped",
    "unverified",
]
"""How a tool call went wrong, as `ToolResult.error` and `ToolCalled.error_kind` name it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Passed to a tool that declares a parameter of this type (it is hidden from the model).

    Attributes:
        run_id: The run this call belongs to.
        agent_id: The sub-agent making the call.
        call_id: The model's id for this call.
        idempotency_key: Stable across retries and resumes of this very call: side-effecting tools
            should hand it to the system they change.
    """

    run_id: str
    agent_id: str
    call_id: str
    idempotency_key: str


class ResultCut(BaseModel):
    """What an outcome holds of a result too long to carry whole (see `agents._capped`).

    Attributes:
        chars: The length of the whole observation text; the outcome's `value` is its start.
        bytes: The size of the whole result's JSON, in UTF-8.
        sha256: The sha256 of that JSON.
        verdict: What the tool's success check said of the whole value (True without one).
        evidence: The evidence hook's (source, excerpt) pairs for it; None cites the call, as a
            tool without a hook (or with a hook that failed) does.
        findings: The declared facts of the whole value, as (fact key, value) pairs.
    """

    model_config = ConfigDict(frozen=True)

    chars: int
    bytes: int
    sha256: str
    verdict: StrictBool | str | None = True
    evidence: tuple[tuple[str, str], ...] | None = None
    findings: tuple[tuple[str, str], ...] = ()


class ToolOutcome(BaseModel):
    """What one execution of a tool produced: a JSON-able value, or an error.

    Attributes:
        ok: Whether the function returned normally.
        value: The return value as JSON-able data (when ok); for a cut result, the start of its
            observation text.
        error: The kind of failure (when not ok).
        message: A sanitised description of the failure, for the model.
        duration_ms: How long the call took.
        cut: Set when the result was too long to carry whole: its size, and what the tool's own
            code made of the whole of it.
    """

    model_config = ConfigDict(frozen=True)

    ok: bool
    value: Any = None
    error: ErrorKind | None = None
    message: str = ""
    duration_ms: float = 0.0
    cut: ResultCut | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A function the model may call. Build one with `@tool`.

    Attributes:
        name: The name the model uses.
        description: What the tool does, from the docstring.
        fn: The wrapped function.
        args_model: The pydantic model that validates arguments.
        timeout: Seconds before a call is abandoned (None: no per-tool limit).
        success: A business check on the return value: None or True means success, False or a
            string (the reason) means failure, e.g. a 200 answer with empty data.
        fields: If set, only these keys of the result (and of dicts in result lists) are shown.
        max_chars: Observations longer than this are cut, with a marker saying so.
        sensitive: Argument names whose values are never logged.
        max_arg_chars: Longer raw arguments are refused unread, and the model is told the limit.
        side_effects: Whether a call changes the world (then it gets an idempotency key on reruns).
        evidence: Turns a successful result into (source, excerpt) pairs; the default cites the call.
        facts: Result keys worth remembering, mapped to fact keys ({"cheapest": "flight_price"}):
            a successful dict result reports them as findings, which an orchestrator with a fact
            store keeps (source "tool:NAME").
        needs_approval: Whether a call waits for a person's decision before it runs (see
            `agents.approvals`): always, or when this predicate of the arguments says so.
        synonyms: Other words a model may use for a parameter's fixed values, bound before the
            call ({"unit": {"c": "celsius"}}; see `agents._binding`).
        first_look: The string argument a task's question fills, when an agent may start from
            this tool's result before its first decision (a search: "query"); an
            `Orchestrator` run makes that call for every sub-agent whose menu has the tool,
            unless its `RunConfig(first_look=...)` says otherwise (see `FirstLook`).
    """

    name: str
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    timeout: float | None = 30.0
    success: Callable[[Any], bool | str | None] | None = None
    fields: tuple[str, ...] | None = None
    max_chars: int = 2000
    sensitive: frozenset[str] = frozenset()
    max_arg_chars: int = MAX_ARG_CHARS
    side_effects: bool = False
    evidence: Callable[[dict[str, Any], Any], Sequence[tuple[str, str]]] | None = None
    facts: Mapping[str, str] | None = None
    needs_approval: bool | Callable[[dict[str, Any]], bool] = False
    synonyms: Mapping[str, Mapping[str, Any]] | None = None
    first_look: str | None = None
    _context_param: str | None = field(default=None, repr=False)
    _spec: ToolSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: the menu is rebuilt before every model call, and generating a pydantic
        # JSON schema costs far more than the rest of an executor step.
        spec = ToolSpec(
            name=self.name, description=self.description, parameters=_clean_schema(self.args_model)
        )
        object.__setattr__(self, "_spec", spec)

    def spec(self) -> ToolSpec:
        """The schema the model sees."""
        return self._spec

    def wants_approval(self, args: dict[str, Any]) -> bool:
        """Whether this call (its validated `args`) waits for a person's decision."""
        needs = self.needs_approval
        return needs(args) if callable(needs) else needs

    @property
    def takes_context(self) -> bool:
        """Whether the function receives a `ToolContext` (and so its idempotency key)."""
        return self._context_param is not None

    def parse(self, arguments: str) -> dict[str, Any]:
        """Validate raw JSON arguments; raise `ValueError` with a model-readable reason."""
        return self.parse_bound(arguments)[0]

    def parse_bound(self, arguments: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Validate raw JSON arguments, near-miss names and values bound first (see
        `agents._binding`); returns them with what was bound. Raises `ValueError` with a
        model-readable reason."""
        if len(arguments) > self.max_arg_chars:
            raise ValueError(
                f"arguments of {len(arguments):,} characters were not read: {self.name} takes at "
                f"most {self.max_arg_chars:,}"
            )
        try:
            raw = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from exc
        except RecursionError:
            raise ValueError("arguments are not valid JSON (nested too deep)") from None
        if not isinstance(raw, dict):
            raise ValueError("arguments must be a JSON object")
        try:
            raw, bound = bind_arguments(self.args_model, raw, self.synonyms)
            return self.args_model.model_validate(raw).model_dump(), bound
        except RecursionError:
            raise ValueError("invalid arguments: nested too deep") from None
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"invalid arguments: {problems}") from exc

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Run the function once under its timeout; never raises except on cancellation."""
        kwargs = dict(args)
        if self._context_param:
            kwargs[self._context_param] = ctx
        start = time.perf_counter()
        try:
            # move_on_after, not fail_after: a TimeoutError raised by the tool itself is a crash.
            with anyio.move_on_after(self.timeout) as scope:
                value = await self._invoke(kwargs)
            if scope.cancelled_caught:
                return self._failure("timeout", f"timed out after {self.timeout:g}s", start)
            jsonable = to_jsonable_python(value, fallback=repr)
        except ToolFailure as exc:
            kind: ErrorKind = "bad_call" if exc.bad_call else "failed"
            return self._failure(kind, self._sanitise(str(exc), args), start)
        except Exception as exc:  # a tool must never crash the loop
            text = self._sanitise(f"{type(exc).__name__}: {exc}", args)
            return self._failure("crashed", text, start)
        return ToolOutcome(ok=True, value=jsonable, duration_ms=_ms_since(start))

    async def _invoke(self, kwargs: dict[str, Any]) -> Any:
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**kwargs)
        # A sync tool runs in a worker thread; on timeout the thread is abandoned, not killed.
        return await anyio.to_thread.run_sync(lambda: self.fn(**kwargs), abandon_on_cancel=True)

    def _failure(self, kind: ErrorKind, message: str, start: float) -> ToolOutcome:
        return ToolOutcome(ok=False, error=kind, message=message, duration_ms=_ms_since(start))

    def _sanitise(self, text: str, args: dict[str, Any]) -> str:
        for name in self.sensitive:
            secret = args.get(name)
            if isinstance(secret, str) and secret:
                text = text.replace(secret, "***")
        return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + "…"


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    timeout: float | None = 30.0,
    success: Callable[[Any], bool | str | None] | None = None,
    fields: Sequence[str] | None = None,
    max_chars: int = 2000,
    sensitive: Sequence[str] = (),
    max_arg_chars: int = MAX_ARG_CHARS,
    side_effects: bool = False,
    evidence: Callable[[dict[str, Any], Any], Sequence[tuple[str, str]]] | None = None,
    facts: Mapping[str, str] | None = None,
    needs_approval: bool | Callable[[dict[str, Any]], bool] = False,
    synonyms: Mapping[str, Mapping[str, Any]] | None = None,
    first_look: str | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    timeout: float | None = 30.0,
    success: Callable[[Any], bool | str | None] | None = None,
    fields: Sequence[str] | None = None,
    max_chars: int = 2000,
    sensitive: Sequence[str] = (),
    max_arg_chars: int = MAX_ARG_CHARS,
    side_effects: bool = False,
    evidence: Callable[[dict[str, Any], Any], Sequence[tuple[str, str]]] | None = None,
    facts: Mapping[str, str] | None = None,
    needs_approval: bool | Callable[[dict[str, Any]], bool] = False,
    synonyms: Mapping[str, Mapping[str, Any]] | None = None,
    first_look: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a sync or async function into a `Tool`, as `@tool` or `@tool(timeout=8.0, ...)`.

    The docstring's first paragraph describes the tool; its `Args:` section describes parameters.
    A parameter annotated `ToolContext` receives the call's context and is hidden from the model.
    See `Tool` for the options.

    Raises:
        ConfigurationError: The function cannot be described (missing type hints, bad options).
    """

    def build(func: Callable[..., Any]) -> Tool:
        if timeout is not None and timeout <= 0:
            raise ConfigurationError(f"tool {func.__name__}: timeout must be positive")
        if max_chars < 50:
            raise ConfigurationError(f"tool {func.__name__}: max_chars must be at least 50")
        if max_arg_chars < 2:
            raise ConfigurationError(f"tool {func.__name__}: max_arg_chars must be at least 2")
        description, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
        args_model, context_param = _args_model(func, arg_docs)
        if first_look is not None and not _takes_text(args_model, first_look):
            raise ConfigurationError(
                f"tool {func.__name__}: first_look={first_look!r} is not a string parameter of it"
            )
        return Tool(
            name=name or func.__name__,
            description=description or func.__name__.replace("_", " "),
            fn=func,
            args_model=args_model,
            timeout=timeout,
            success=success,
            fields=tuple(fields) if fields is not None else None,
            max_chars=max_chars,
            sensitive=frozenset(sensitive),
            max_arg_chars=max_arg_chars,
            side_effects=side_effects,
            evidence=evidence,
            facts=dict(facts) if facts is not None else None,
            needs_approval=needs_approval,
            synonyms={k: dict(v) for k, v in synonyms.items()} if synonyms else None,
            first_look=first_look,
            _context_param=context_param,
        )

    return build(fn) if fn is not None else build


def _takes_text(args_model: type[BaseModel], name: str) -> bool:
    """Whether `name` is a parameter a string can fill (str, or str | None)."""
    found = args_model.model_fields.get(name)
    return found is not None and str in {found.annotation, *get_args(found.annotation)}


def _args_model(
    func: Callable[..., Any], arg_docs: dict[str, str]
) -> tuple[type[BaseModel], str | None]:
    try:
        hints = get_type_hints(func, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"tool {func.__name__}: cannot resolve type hints: {exc}") from exc
    fields: dict[str, Any] = {}
    context_param = None
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigurationError(f"tool {func.__name__}: *args and **kwargs are not supported")
        if param.name not in hints:
            raise ConfigurationError(f"tool {func.__name__}: parameter {param.name!r} has no type")
        if hints[param.name] is ToolContext:
            context_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            hints[param.name],
            Field(default, description=arg_docs.get(param.name)),
        )
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    try:
        model = create_model(f"{func.__name__}_args", __config__=config, **fields)
        model.model_json_schema()  # fail here, not later when the menu is built inside a loop
    except PydanticUserError as exc:
        raise ConfigurationError(
            f"tool {func.__name__}: cannot describe its arguments: {exc}"
        ) from exc
    return model, context_param


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument descriptions."""
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _ARG_LINE.match(line)
            if match and not line.startswith("        "):
                current = match.group(1).lstrip("*")
                args[current] = match.group(3).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return " ".join(" ".join(description).split()), args


def _clean_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema without pydantic's titles, which only cost tokens."""

    def strip(node: Any, *, is_map: bool = False) -> Any:
        # In "properties" and "$defs" the keys are names, not keywords: a field may be called title.
        if isinstance(node, dict):
            return {
                k: strip(v, is_map=not is_map and k in ("properties", "$defs"))
                for k, v in node.items()
                if is_map or k != "title"
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema: dict[str, Any] = strip(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
