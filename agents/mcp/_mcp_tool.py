"""`MCPTool`: one tool of an MCP server, checked against the server's schema before a call, and
what the model reads of its results (structured content, else text; media named, not inlined).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents._errors import ToolFailure
from agents._tools import Tool
from agents.models._model import ToolSpec

try:
    import jsonschema
    from mcp import types as mcp_types
except ImportError:  # pragma: no cover - the extra is not installed (`MCPServer` says so)
    pass

__all__ = ["AnyArgs", "MCPTool", "result_value", "tool_name"]


class AnyArgs(BaseModel):
    """Arguments pass through unchanged: the server's JSON schema validates them (`MCPTool.parse`)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPTool(Tool):
    """A tool of an MCP server (built by `MCPServer`).

    Attributes:
        server: The server's name.
        remote_name: The tool's name on the server (`name` may carry a prefix).
        schema: The server's JSON schema of its arguments.
        read_only: The server says it changes nothing (`readOnlyHint`).
        destructive: The server says it may destroy data (`destructiveHint`; MCP's default is
            true for a tool that is not read-only).
    """

    server: str = ""
    remote_name: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    destructive: bool = True
    _validator: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        parameters = _strip_titles(dict(self.schema))
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})
        spec = ToolSpec(name=self.name, description=self.description, parameters=parameters)
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_validator", jsonschema.Draft202012Validator(parameters))

    def parse(self, arguments: str) -> dict[str, Any]:
        """Decode the raw JSON arguments and check them against the server's schema."""
        return self.parse_bound(arguments)[0]

    def parse_bound(self, arguments: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """`parse`, with what schema binding bound (see `agents._binding`), then the server's
        own schema check on the arguments that will be sent."""
        args, bound = Tool.parse_bound(self, arguments)
        problems = sorted(self._validator.iter_errors(args), key=lambda e: list(e.path))
        if problems:
            raise ValueError(f"invalid arguments: {'; '.join(_problem(p) for p in problems[:5])}")
        return args, bound


def tool_name(name: str) -> str:
    """`name` as a model may call it: letters, digits, `_` and `-`, at most 64 characters."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in name)
    return cleaned[:64] or "tool"


def result_value(result: mcp_types.CallToolResult) -> Any:
    """What the model reads of a result: structured content, else the text of its blocks."""
    if result.is_error:
        raise ToolFailure(_text(result.content) or "the tool reported an error")
    if result.structured_content is not None:
        return result.structured_content
    return _text(result.content)


def _text(blocks: Sequence[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        match block:
            case mcp_types.TextContent(text=text):
                parts.append(text)
            case mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents() as res):
                parts.append(res.text)
            case mcp_types.EmbeddedResource(resource=res):
                parts.append(f"[resource {res.uri}, {res.mime_type or 'binary'}]")
            case mcp_types.ResourceLink(uri=uri, name=name):
                parts.append(f"[link {name}: {uri}]")
            case mcp_types.ImageContent(mime_type=mime) | mcp_types.AudioContent(mime_type=mime):
                parts.append(f"[{block.type} {mime}, {len(block.data) * 3 // 4:,} bytes]")
    return "\n".join(parts)


def _problem(error: Any) -> str:
    where = ".".join(str(p) for p in error.path) or "arguments"
    return f"{where}: {error.message[:200]}"


def _strip_titles(node: Any, *, is_map: bool = False) -> Any:
    """The schema without `title` keywords, which only cost tokens (names under `properties` stay)."""
    if isinstance(node, dict):
        return {
            k: _strip_titles(v, is_map=not is_map and k in ("properties", "$defs", "definitions"))
            for k, v in node.items()
            if is_map or k != "title"
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
