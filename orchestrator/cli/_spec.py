"""`ResearchSpec`: how a `paor research` run was set up, typed, as its journal keeps it.

`resume` and `replay` rebuild the run from it: the same corpus, limits and model options (a model
option given again on the command line wins). It never holds a credential: the API key comes from
the environment again, and credentials inside the base URL are masked before it is stored.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from agents import AgentLimits, ConfigurationError
from agents.models import DecisionProtocol
from agents.telemetry import REDACTED, redact_text
from agents.toolkits import Corpus
from orchestrator._limits import Limits

__all__ = ["ResearchSpec"]

_MODEL_OPTIONS = ("model", "base_url", "protocol")


class ResearchSpec(BaseModel):
    """A `paor research` run's set-up.

    Attributes:
        topic: What was researched.
        docs: The corpus folder (absolute), or None for the Python reference.
        out: Where the report goes (absolute).
        limits: The run's limits.
        model: The model name at the endpoint, if one was given.
        base_url: The endpoint, credentials masked, if one was given.
        protocol: The decision protocol.
        gguf: The GGUF file the embedded server ran (absolute), if one was given.
        mcp: The `mcpServers` file whose tools the agents had (absolute), if one was given.
        approve: What waits for a person: "plan" (every plan version), "tools" (calls of
            tools that change something), or "all".
        questions: How many clarifying questions the run may ask the user.
        schema_file: The JSON Schema file the answer follows (absolute), if one was given.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: Literal["research"] = "research"
    topic: str
    docs: str | None = None
    out: str
    limits: Limits
    model: str | None = None
    base_url: str | None = None
    protocol: DecisionProtocol = "auto"
    gguf: str | None = None
    mcp: str | None = None
    approve: Literal["plan", "tools", "all"] | None = None
    questions: int = 0
    schema_file: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Self:
        """The spec of the command line `args` (`paor research ...`)."""
        limits = Limits(
            max_subtasks=args.max_subtasks,
            deadline_s=args.deadline,
            max_tokens=args.max_tokens,
            max_cost=args.max_cost,
            agent=AgentLimits(max_steps=args.max_steps),
        )
        return cls(
            topic=args.topic,
            docs=str(args.docs.resolve()) if args.docs else None,
            out=str(args.out.resolve()),
            limits=limits,
            model=args.model,
            base_url=redact_text(args.base_url) if args.base_url else None,
            protocol=args.protocol,
            gguf=str(args.gguf.resolve()) if args.gguf else None,
            mcp=str(args.mcp.resolve()) if getattr(args, "mcp", None) else None,
            approve=getattr(args, "approve", None),
            questions=getattr(args, "questions", 0) or 0,
            schema_file=str(args.schema.resolve()) if getattr(args, "schema", None) else None,
        )

    @classmethod
    def from_meta(cls, run_id: str, meta: dict[str, Any]) -> Self:
        """The spec a run was recorded with.

        Raises:
            ConfigurationError: The run was not started by `paor research`, or its record
                cannot be read.
        """
        if meta.get("command") == "batch":
            raise ConfigurationError(
                f"run {run_id} is a task of `paor batch`, which resumes its own tasks: run the "
                "batch again with the same --out and --journal"
            )
        if meta.get("command") != "research":
            raise ConfigurationError(
                f"run {run_id} was not started by `paor research`: resume or replay it "
                "through the API (Orchestrator.resume, Orchestrator.replay)"
            )
        try:
            return cls.model_validate(meta.get("spec") or _flat(meta))
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(map(str, problem["loc"]))
            raise ConfigurationError(
                f"run {run_id}'s set-up cannot be read ({where}: {problem['msg']})"
            ) from None

    def meta(self) -> dict[str, Any]:
        """What the journal stores with the run."""
        return {"command": self.command, "spec": self.model_dump(mode="json")}

    def given(self, args: argparse.Namespace) -> Self:
        """This spec with the model options and `--out` given now (they win); a masked base
        URL is taken from `$OPENAI_BASE_URL`, since credentials are never stored.

        Raises:
            ConfigurationError: The stored base URL had credentials and none is given now.
        """
        now = {name: getattr(args, name, None) for name in _MODEL_OPTIONS}
        changes: dict[str, Any] = {name: value for name, value in now.items() if value}
        if getattr(args, "out", None):
            changes["out"] = str(Path(args.out).resolve())
        spec = self.model_copy(update=changes)
        if spec.base_url and REDACTED in spec.base_url:
            url = os.environ.get("OPENAI_BASE_URL")
            if not url:
                raise ConfigurationError(
                    "this run was recorded with credentials in --base-url, which are never "
                    "stored: pass --base-url again (or set OPENAI_BASE_URL)"
                )
            spec = spec.model_copy(update={"base_url": url})
        return spec

    def corpus(self) -> Corpus:
        """The documents: the folder, or the Python reference."""
        return Corpus.from_folder(Path(self.docs)) if self.docs else Corpus.python_docs()


def _flat(meta: dict[str, Any]) -> dict[str, Any]:
    """A spec from the flat metadata of journals written before specs were typed."""
    limits = {
        "max_subtasks": meta.get("max_subtasks") or 3,
        "deadline_s": meta.get("deadline"),
        "max_tokens": meta.get("max_tokens"),
        "agent": {"max_steps": meta.get("max_steps") or 6},
    }
    keep = ("topic", "docs", "out", "model", "base_url", "protocol", "gguf")
    return {"limits": limits, **{k: meta[k] for k in keep if meta.get(k) is not None}}
