"""The JSON decision protocol, for servers that cannot call tools natively.

Each turn the model answers with one JSON object, constrained by `response_format` json_schema:

    {"kind": "tool_calls", "calls": [{"tool": "search", "arguments": {...}}, ...]}
    {"kind": "final", "answer": "..."}

The schema is a union with one branch per tool, so a grammar-constrained server (llama.cpp) can only
produce known tool names with well-typed arguments. Decisions are translated into the same
`AssistantMessage` the native protocol produces, so the loops never know which protocol ran; the
transcript is rendered back as plain chat messages that any chat template accepts.
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from agents._errors import MalformedResponse
from agents._report import cited_ids
from agents.models._model import ModelRequest, ToolSpec
from memory import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage

__all__ = ["cap_strings", "decision_schema", "inline_refs", "parse_decision", "render_messages"]


class _Call(BaseModel):
    tool: str
    arguments: dict[str, Any] = {}


class _ToolCalls(BaseModel):
    kind: Literal["tool_calls"]
    calls: list[_Call] = Field(min_length=1)


class _Final(BaseModel):
    kind: Literal["final"]
    answer: str
    cites: list[str] = []

    def text(self) -> str:
        """The answer with the sources it names cited in [brackets] (those it already cites
        stay where the model put them), a sentence cut off by the length bound left out."""
        answer = _whole_sentences(self.answer)
        cited = cited_ids(answer)
        missing = [c for c in dict.fromkeys(self.cites) if c not in cited]
        return f"{answer} [{', '.join(missing)}]" if missing else answer


def _whole_sentences(text: str) -> str:
    """`text` without a last sentence that stops mid-way (the schema's length bound cut it),
    unless that would leave less than half of it (a short answer needs no full stop)."""
    text = text.rstrip()
    if not text or text[-1] in ".!?)]\"'`":
        return text
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[: end + 1] if end >= len(text) // 2 else text


_DECISION: TypeAdapter[_ToolCalls | _Final] = TypeAdapter(
    Annotated[_ToolCalls | _Final, Field(discriminator="kind")]
)


def decision_schema(
    tools: tuple[ToolSpec, ...],
    citable: tuple[str, ...] = (),
    *,
    answer_chars: int | None = None,
) -> dict[str, Any]:
    """The JSON schema of one decision given the tools on the menu.

    With `citable` sources, a final answer must name one to three of them (an enum: a
    grammar-constrained model can cite only what it gathered). `answer_chars` bounds the answer.
    """
    answer: dict[str, Any] = {"type": "string"}
    if answer_chars is not None:
        answer["maxLength"] = answer_chars
    final: dict[str, Any] = {
        "type": "object",
        "properties": {"kind": {"const": "final"}, "answer": answer},
        "required": ["kind", "answer"],
        "additionalProperties": False,
    }
    if citable:
        final["properties"]["cites"] = {
            "type": "array",
            "items": {"enum": list(citable)},
            "minItems": 1,
            "maxItems": min(3, len(citable)),
        }
        final["required"] = ["kind", "answer", "cites"]
    if not tools:
        return final
    branches = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name}, "arguments": inline_refs(t.parameters)},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    calls = {
        "type": "object",
        "properties": {
            "kind": {"const": "tool_calls"},
            "calls": {"type": "array", "minItems": 1, "items": {"anyOf": branches}},
        },
        "required": ["kind", "calls"],
        "additionalProperties": False,
    }
    return {"anyOf": [calls, final]}


def parse_decision(text: str) -> AssistantMessage:
    """Turn a decision's JSON text into an assistant message; raise `MalformedResponse` if unusable."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
        raise MalformedResponse(
            f"the reply is not valid JSON ({why}); answer with one JSON object, a tool call "
            'or {"kind": "final", "answer": ...}',
            raw=text,
        ) from exc
    try:
        decision = _DECISION.validate_python(_infer_kind(raw))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise MalformedResponse(
            f"the reply does not match the decision format ({problems})", raw=text
        ) from exc
    if isinstance(decision, _Final):
        return AssistantMessage(content=decision.text())
    return AssistantMessage(
        tool_calls=tuple(
            ToolCall(
                id=f"call_{uuid.uuid4().hex[:12]}", name=c.tool, arguments=json.dumps(c.arguments)
            )
            for c in decision.calls
        )
    )


def _infer_kind(raw: Any) -> Any:
    """Accept the near misses small models make: a missing kind, or one bare call."""
    if not isinstance(raw, dict) or "kind" in raw:
        return raw
    if "calls" in raw:
        return {"kind": "tool_calls", **raw}
    if "tool" in raw:
        return {"kind": "tool_calls", "calls": [raw]}
    if "answer" in raw:
        return {"kind": "final", **raw}
    return raw


def render_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The transcript as plain chat messages, with the decision format explained up front."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        out.extend(_render(message, structured=request.output is not None))
    guide = _guide(request.tools, request.citable) if request.output is None else ""
    if guide:
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{guide}"}
        else:
            out.insert(0, {"role": "system", "content": guide})
    return _merge_adjacent(out)


def _render(message: Message, *, structured: bool) -> list[dict[str, Any]]:
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = [{"tool": c.name, "arguments": _loads(c.arguments)} for c in message.tool_calls]
        return [
            {"role": "assistant", "content": json.dumps({"kind": "tool_calls", "calls": calls})}
        ]
    if isinstance(message, AssistantMessage):
        text = message.content or ""
        content = text if structured else json.dumps({"kind": "final", "answer": text})
        return [{"role": "assistant", "content": content}]
    if isinstance(message, ToolMessage):
        return [{"role": "user", "content": f"Result of {message.name}:\n{message.content}"}]
    if isinstance(message, SystemMessage):
        return [{"role": "system", "content": message.content}]
    return [{"role": "user", "content": message.content}]


def _guide(tools: tuple[ToolSpec, ...], citable: tuple[str, ...] = ()) -> str:
    # No example value a copy could pass off as an answer: the shapes are described, not filled in.
    finish = 'To finish: {"kind": "final", "answer": ...} with your answer as the string.'
    if citable:
        finish = (
            'To finish: {"kind": "final", "answer": ..., "cites": [...]} with your answer as the '
            "string and, in cites, the ids of the sources it rests on, from: "
            f"{', '.join(citable)}."
        )
    if not tools:
        return f"Reply with one JSON object. {finish}"
    lines = [
        "Reply with one JSON object. To use tools: "
        '{"kind": "tool_calls", "calls": [{"tool": ..., "arguments": {...}}]} naming a tool below. '
        f"{finish} Tools:"
    ]
    for t in tools:
        params = json.dumps(t.parameters.get("properties", {}), separators=(",", ":"))
        lines.append(f"- {t.name}: {t.description} Arguments: {params}")
    return "\n".join(lines)


def _merge_adjacent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Join consecutive user messages: some chat templates require strict alternation."""
    merged: list[dict[str, Any]] = []
    for m in messages:
        if merged and m["role"] == "user" and merged[-1]["role"] == "user":
            merged[-1] = {"role": "user", "content": f"{merged[-1]['content']}\n\n{m['content']}"}
        else:
            merged.append(m)
    return merged


def _loads(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a schema with local `$ref`s replaced by their definitions (no recursion support)."""
    defs = schema.get("$defs", {})

    def resolve(node: Any, depth: int = 0) -> Any:
        if depth > 20:
            return {}
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(defs.get(ref.removeprefix("#/$defs/"), {}), depth + 1)
            return {k: resolve(v, depth + 1) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v, depth + 1) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def cap_strings(schema: dict[str, Any], max_chars: int, max_items: int = 3) -> dict[str, Any]:
    """A copy of a schema where strings and arrays are bounded (unless already bounded).

    Small models under grammar-constrained decoding tend to run on inside a string or a list
    until the token limit cuts the JSON short; a bound in the grammar makes them close it.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        if out.get("type") == "string" and "maxLength" not in out and "const" not in out:
            out["maxLength"] = max_chars
        if out.get("type") == "array" and "maxItems" not in out:
            out["maxItems"] = max_items
        return out

    capped: dict[str, Any] = walk(schema)
    return capped
