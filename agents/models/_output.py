"""Typed answers: an agent's or a run's answer as an instance of a type the caller names.

`OutputSpec` turns a Python type (a pydantic model, a dataclass, a TypedDict, a `list[...]`, a
primitive, or a union of them) into the JSON schema a request carries (an endpoint that has a
JSON-schema `response_format` makes the model's reply fit it; llama.cpp turns it into a grammar),
and validates the reply back into the type. A type whose schema is not an object is asked for as
`{"output": ...}`, since response formats take objects.

`typed_report` gives an executor's report its object (`Executor(output_type=...)`): once the
agent has answered, one more request asks for the answer as the type, from the answer and the
evidence only (with no usable answer, from the task, its context and the evidence, and the
report is then partial). A reply that does not validate, or that has numbers neither shows,
goes back with the reason, a bounded number of times; then the report is `partial`, its
`output` the best object of the right shape (or None) and a note saying why, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from agents._answers import unseen_numbers
from agents._errors import ConfigurationError, MalformedResponse, ModelError
from agents._own_text import own_text
from agents._report import AgentReport
from agents._tracing import logger
from agents.models._dates import has_date_fields, named_dates
from agents.models._model import ModelRequest, ModelResponse, OutputSchema, RequestPurpose
from agents.models._textcalls import json_values
from memory import AssistantMessage, Message, SystemMessage, UserMessage

__all__ = ["OUTPUT_TRIES", "OutputSpec", "Written", "typed_report"]

T = TypeVar("T")
OUTPUT_TRIES = 3
"""Replies a model may give before an object that does not validate is given up (the first,
then two told what was wrong)."""
_WRAPPER = "output"
_ERRORS_SHOWN = 3
_EVIDENCE_CHARS = 600
_ISO_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_ISO_DATE = re.compile(r"(\d{4})-\d{2}-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_SPENT = frozenset({"deadline", "tokens", "cost", "requests", "error", "cancelled"})
"""Why a loop stopped when no request is left to write its object with."""
_log = logger("paor.model")


class OutputSpec(Generic[T]):
    """What an output type asks of the model, and how its reply is checked.

    Args:
        output_type: The type (anything pydantic's `TypeAdapter` takes).

    Raises:
        ConfigurationError: The type has no JSON schema (a callable, an arbitrary class).
    """

    def __init__(self, output_type: type[T] | Any) -> None:
        self.output_type = output_type
        self._validator: Any = None  # a JSON Schema's (`from_json_schema`)
        try:
            self.adapter: TypeAdapter[T] = TypeAdapter(output_type)
            schema = self.adapter.json_schema()
        except Exception as exc:  # pydantic raises several kinds for a type it cannot describe
            why = str(exc).splitlines()[0]
            raise ConfigurationError(
                f"output_type {_name(output_type)} has no JSON schema: {why}"
            ) from None
        self._ask_for(_name(output_type), schema)

    @classmethod
    def from_json_schema(cls, schema: Any, name: str = "output") -> OutputSpec[Any]:
        """The output a JSON Schema describes (its value is JSON data: dicts, lists, ...), as
        `paor batch --schema FILE` reads it.

        Raises:
            ConfigurationError: `schema` is not a valid JSON Schema (or `jsonschema`, which
                checks it, is not installed).
        """
        try:
            import jsonschema
        except ImportError:
            raise ConfigurationError(
                "a JSON Schema output needs jsonschema: pip install jsonschema"
            ) from None
        if not isinstance(schema, dict):
            raise ConfigurationError("a JSON Schema is a JSON object")
        checker = jsonschema.validators.validator_for(schema)
        try:
            checker.check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "the top"
            raise ConfigurationError(
                f"not a valid JSON Schema (at {where}): {exc.message}"
            ) from None
        spec = cls(Any)
        spec._validator = checker(schema)
        spec._ask_for(_name(schema.get("title") or name), dict(schema))
        return spec

    def _ask_for(self, name: str, schema: dict[str, Any]) -> None:
        """Ask for `schema`, in an object when it is not one."""
        self.name = name
        self.wrapped = schema.get("type") != "object"
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {
                "type": "object",
                "properties": {_WRAPPER: schema},
                "required": [_WRAPPER],
                **({"$defs": defs} if defs else {}),
            }
        self.schema: dict[str, Any] = schema

    async def write(
        self,
        ask: Callable[[ModelRequest], Awaitable[ModelResponse]],
        *,
        system: str,
        prompt: str,
        purpose: RequestPurpose,
    ) -> Written[T]:
        """An object of the type written from `prompt` by the model `ask` reaches, validated;
        never raises.

        A reply that is not valid JSON for the type, or that has numbers `prompt` never showed,
        goes back with the reason (at most `OUTPUT_TRIES` replies in all). With date fields, the
        dates `prompt` names are listed after it as ISO dates, and a date that is none of them goes
        back too; of an ISO date, its year and day are checked (the text may name its month)."""
        system = (
            f"{system}\n\nAnswer with one JSON object that matches the schema `{self.name}`, "
            "filled from what you were given only."
        )
        # Dates are read by paor, not converted by the model (see `agents.models._dates`).
        dates = named_dates(prompt) if has_date_fields(self.schema) else {}
        if dates:
            listed = "; ".join(f"{written} = {iso}" for written, iso in dates.items())
            prompt = f"{prompt}\n\nThe dates above as ISO dates: {listed}"
        messages: list[Message] = [SystemMessage(content=system), UserMessage(content=prompt)]
        output = OutputSchema(name=self.name, schema_=self.schema)
        problem = "no reply"
        text = ""
        best: T | None = None  # the last object of the right shape, had its content failed
        for _ in range(OUTPUT_TRIES):
            try:
                request = ModelRequest(messages=tuple(messages), output=output, purpose=purpose)
                text = ((await ask(request)).message.content or "").strip()
            except MalformedResponse as exc:
                text = exc.raw
            except (ModelError, TimeoutError) as exc:
                problem = f"the model failed ({str(exc) or 'the deadline was reached'})"
                break
            try:
                value = self.parse(text)
            except ValueError as exc:
                problem = str(exc)
            else:
                best = value
                problem = _unsupported(self.dump(value), prompt, dates) or ""
                if not problem:
                    return Written(self.dump(value), value)
            _log.warning("output_rejected", output_type=self.name, problem=problem)
            messages += [
                AssistantMessage(content=text or "(empty)"),
                UserMessage(content=f"Your object was not accepted: {problem}. Write it again."),
            ]
        return Written(text, best, f"no valid {self.name}: {problem}")

    def parse(self, text: str) -> T:
        """The reply `text` as an instance of the type: all of it JSON, or else the first JSON
        value written in it (in prose or a code fence) that validates.

        Raises:
            ValueError: It is not JSON, or does not validate (the message says where, in one
                line).
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            # An endpoint that ignores the response format answers in prose or a code fence:
            # the first JSON value in it that validates is the object.
            found = list(json_values(text))
            if not found:
                raise ValueError(f"the reply is not JSON ({exc.msg})") from None
            return self._first_valid(found)
        return self._validated(data)

    def _first_valid(self, values: list[Any]) -> T:
        """The first of `values` that validates; else the first one's problem."""
        problems: list[ValueError] = []
        for value in values:
            try:
                return self._validated(value)
            except ValueError as exc:
                problems.append(exc)
        raise problems[0]

    def _validated(self, data: Any) -> T:
        if self.wrapped and isinstance(data, dict) and set(data) == {_WRAPPER}:
            data = data[_WRAPPER]
        if self._validator is not None:
            problems = sorted(self._validator.iter_errors(data), key=lambda e: list(e.path))
            if problems:
                said = [
                    f"{'.'.join(str(p) for p in e.path) or 'the object'}: {e.message}"
                    for e in problems[:_ERRORS_SHOWN]
                ]
                left = len(problems) - len(said)
                more = f" (and {left} more)" if left > 0 else ""
                raise ValueError("; ".join(said) + more)
        try:
            return self.adapter.validate_python(data)
        except ValidationError as exc:
            raise ValueError(_errors(exc)) from None

    def of_data(self, data: Any) -> T:
        """JSON data of this output (a run's `output` as Temporal returns it) as the type.

        Raises:
            ValueError: It does not validate.
        """
        return self.parse(json.dumps(data))

    def dump(self, value: T) -> str:
        """`value` as JSON text."""
        return self.adapter.dump_json(value).decode()


class Written(Generic[T]):
    """An object a model wrote: its JSON text, the object, and what is wrong with it when
    something is (`problem`: then `value` is the last reply of the right shape whose content
    failed a check, the best there is, or None, and `text` the last reply)."""

    def __init__(self, text: str, value: T | None, problem: str | None = None) -> None:
        self.text = text
        self.value = value
        self.problem = problem


async def typed_report(
    spec: OutputSpec[Any],
    report: AgentReport,
    ask: Callable[[ModelRequest], Awaitable[ModelResponse]],
    context: str = "",
) -> AgentReport:
    """`report` with its answer as an object of `spec`'s type (`output`); one whose object is
    not valid is `partial`, with a note.

    A report with no usable answer, whose loop ended on its answers (rejected, repeated, in a
    loop) rather than on a spent limit or an error, still gets its object when there is
    anything to read it from: written from the task, `context` and the evidence, and then
    `partial` with a note saying so (with the best object of the right shape and the reason,
    when none passes; left as it was when none has the shape).
    """
    evidence = "".join(f"\n- [{e.source}] {e.excerpt[:_EVIDENCE_CHARS]}" for e in report.evidence)
    # paor's own words in place of an answer ("Incomplete: stopped early ...") are none.
    answered = (
        report.status != "failed"
        and bool(report.answer.strip())
        and own_text(report.answer) is None
    )
    if not answered and (report.stop_reason in _SPENT or not (context.strip() or evidence)):
        return report
    prompt = f"Task: {report.task}"
    if answered:
        prompt += f"\n\nAnswer found:\n{report.answer}"
    elif context.strip():
        prompt += f"\n\nGiven:\n{context.strip()}"
    if evidence:
        prompt += f"\n\nEvidence:{evidence}"
    system = (
        "You turn an answer into data." if answered else "You turn what you were given into data."
    )
    written = await spec.write(ask, system=system, prompt=prompt, purpose="output")
    if not answered:
        read = "no usable answer: its object was read from its task, context and evidence"
        if written.value is None:  # not even an object of the right shape
            return report.model_copy(update={"notes": (*report.notes, written.problem or read)})
        notes = (*report.notes, read, *([written.problem] if written.problem else []))
        return report.model_copy(
            update={"status": "partial", "notes": notes, "output": written.value}
        )
    if written.problem is None:
        return report.model_copy(update={"output": written.value})
    notes = (*report.notes, written.problem)
    return report.model_copy(update={"status": "partial", "notes": notes, "output": written.value})


def _unsupported(dumped: str, prompt: str, dates: dict[str, str]) -> str | None:
    """What in an object's JSON the prompt does not give: a date that is none of the dates it
    names, or a number it never shows. An ISO date is the model's reading of a date the text
    writes its own way ("3 May 2026"): its year and day must be shown, its month may be a name."""
    given = set(dates.values())
    foreign = [d for d in dict.fromkeys(_ISO_DAY.findall(dumped)) if given and d not in given]
    if foreign:
        return (
            f"{', '.join(foreign[:3])} is not a date you were given; as ISO dates, the dates "
            f"given are {', '.join(list(dict.fromkeys(dates.values()))[:5])}"
        )
    unseen = unseen_numbers(_ISO_DATE.sub(_year_and_day, dumped), [prompt])
    return f"numbers nothing you were given shows: {', '.join(unseen[:5])}" if unseen else None


def _year_and_day(date: re.Match[str]) -> str:
    return f"{date.group(1)} {int(date.group(2))}"


def _name(output_type: Any) -> str:
    name = getattr(output_type, "__name__", None) or str(output_type)
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "output"


def _errors(exc: ValidationError) -> str:
    said = []
    for error in exc.errors()[:_ERRORS_SHOWN]:
        where = ".".join(str(part) for part in error["loc"]) or "the object"
        said.append(f"{where}: {error['msg']}")
    more = exc.error_count() - len(said)
    return "; ".join(said) + (f" (and {more} more)" if more > 0 else "")
