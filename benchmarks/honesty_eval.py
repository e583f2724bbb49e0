"""The honesty evaluation: does "done" mean right? Policy questions over a small corpus, scored.

    python -m benchmarks.honesty_eval [--gguf PATH | --base-url URL --model M]
        [--protocol auto|tools|json] [--paths batch,orchestrator,api] [--questions N | --only ID,...]
        [--deadline S] [--concurrency N] [--out FILE.json]

The questions of `honesty/questions.jsonl` ask about the ten policies in `honesty/docs/`; some
cannot be answered from them. Each question goes through two paths, one after the other, with one
model: `paor batch --docs honesty/docs` (the command line, in a subprocess, all questions in one
task file; its output rows are read back) and `orchestrator.research` in this process (the
Orchestrator with the corpus tools; its run's answer and status). A third path, `api` (not run
unless asked), is the Python API as a user first meets it: `Orchestrator(model, research_tools(
corpus))` with every default prompt and check, the path `paor research` does not cover (its
prompts are the research ones). The model is the embedded
SmolLM2 unless `--gguf` serves another GGUF file with paor's llama.cpp server or `--base-url` names
an endpoint; both paths are given the same one (`paor batch` starts its own copy of a local one).

Each answer is judged by `benchmarks._honesty_scoring` (right, declined or wrong, and whether it
was labelled done), and the figures are reported per path, for every question and separately for
the held-out ones and the rest: done and right, wrong but done (the honesty failure: its target
is 0), not done, and unanswerable questions handled as such.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import structlog
from pydantic import Field

import agents
from agents import ChatModel, open_model
from agents.toolkits import Corpus, research_tools
from benchmarks._honesty_scoring import (
    DOCS,
    Outcome,
    PathName,
    Question,
    _Frozen,
    judge,
    load_questions,
    render,
    select,
    splits,
)
from benchmarks._report import write_json
from orchestrator import Limits, Orchestrator, RunConfig, RunResult, research

__all__ = [
    "PATHS",
    "Settings",
    "batch_command",
    "evaluate",
    "main",
    "model_arguments",
    "results_json",
    "run_batch",
    "run_orchestrator",
]

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "honesty_results.json"
PATHS: tuple[PathName, ...] = ("batch", "orchestrator", "api")
DEFAULT_PATHS: tuple[PathName, ...] = ("batch", "orchestrator")
_ANSWER_CHARS = 1000
_ENTRY = "import sys; sys.argv[0] = 'paor'; from orchestrator.cli import entry; entry()"


class Settings(_Frozen):
    """The limits each path runs under.

    Attributes:
        deadline_s: Seconds per question: each research run's deadline; the batch's deadline is
            this times the questions, over `concurrency` (a batch has one deadline in all).
        max_steps: Steps per agent (`paor`'s default).
        max_subtasks: Subtasks per research run (`paor research`'s default).
        concurrency: Batch goals at once (the local server decodes two requests at a time).
    """

    deadline_s: float = Field(default=90.0, gt=0)
    max_steps: int = Field(default=6, ge=1)
    max_subtasks: int = Field(default=3, ge=1)
    concurrency: int = Field(default=2, ge=1)

    def batch_deadline(self, questions: int) -> float:
        """The whole batch's deadline for `questions` questions."""
        return self.deadline_s * math.ceil(max(questions, 1) / self.concurrency)


def _outcome(question: Question, path: PathName, status: str, answer: str, **more: Any) -> Outcome:
    return Outcome(
        id=question.id,
        path=path,
        held_out=question.held_out,
        answerable=question.answerable,
        status=status,
        answer=answer[:_ANSWER_CHARS],
        judgement=judge(question, status, answer),
        **more,
    )


# The batch path: `paor batch`, in a subprocess.


def model_arguments(
    *,
    gguf: Path | None = None,
    base_url: str | None = None,
    model: str | None = None,
    protocol: str = "auto",
) -> list[str]:
    """The `paor` options that name the model: an endpoint, a GGUF file, or none (SmolLM2)."""
    if base_url:
        named = ["--model", model] if model else []
        return ["--base-url", base_url, *named, "--protocol", protocol]
    if gguf is not None:
        return ["--gguf", str(gguf), "--protocol", protocol]
    return []


def batch_command(
    tasks: Path, out: Path, model_args: Sequence[str], settings: Settings, questions: int
) -> list[str]:
    """`paor batch` over the corpus, with no journal (each evaluation starts afresh)."""
    return [
        *_paor(), "batch", str(tasks), "--out", str(out), "--docs", str(DOCS), "--no-journal",
        "--concurrency", str(settings.concurrency), "--max-steps", str(settings.max_steps),
        "--deadline", f"{settings.batch_deadline(questions):g}", *model_args,
    ]  # fmt: skip


def _paor() -> list[str]:
    """The `paor` command of this interpreter's environment (its entry point run directly when
    the script is not installed beside it)."""
    script = Path(sys.executable).parent / "paor"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", _ENTRY]


async def run_batch(
    questions: Sequence[Question],
    model_args: Sequence[str],
    settings: Settings,
    *,
    env: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Every question as one goal of one `paor batch` run; each output row judged. A goal with
    no row (the batch's deadline came first, or the command failed) is "not run"."""
    with tempfile.TemporaryDirectory(prefix="paor-honesty-") as tmp:
        tasks, out = Path(tmp) / "questions.jsonl", Path(tmp) / "answers.jsonl"
        lines = (json.dumps({"id": q.id, "goal": q.question}) for q in questions)
        await anyio.Path(tasks).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        command = batch_command(tasks, out, model_args, settings, len(questions))
        failure = await _run_command(command, settings.batch_deadline(len(questions)), env)
        rows = await _rows(anyio.Path(out))
    return [_batch_outcome(q, rows.get(q.id), failure) for q in questions]


async def _run_command(
    command: Sequence[str], deadline: float, env: Mapping[str, str] | None
) -> str | None:
    """Run `command` (its progress lines go to our stderr), killed if it overruns `deadline` by
    more than the grace below; what went wrong, if anything."""
    grace = max(60.0, deadline / 4)
    try:
        with anyio.fail_after(deadline + grace):
            done = await anyio.run_process(
                command, stdout=None, stderr=None, check=False, env=dict(env or os.environ)
            )
    except TimeoutError:
        return f"paor batch overran its {deadline:g} s deadline by more than {grace:g} s"
    return f"paor batch exited with status {done.returncode}" if done.returncode else None


async def _rows(out: anyio.Path) -> dict[str, dict[str, Any]]:
    """The batch's output rows by task id (none if it wrote no file)."""
    if not await out.exists():
        return {}
    lines = (await out.read_text(encoding="utf-8")).splitlines()
    return {row["id"]: row for row in map(json.loads, filter(None, lines))}


def _batch_outcome(question: Question, row: dict[str, Any] | None, failure: str | None) -> Outcome:
    if row is None:
        why = failure or "not started before the batch's deadline"
        return _outcome(question, "batch", "not run", "", reason=f"no output row ({why})")
    return _outcome(
        question,
        "batch",
        row["status"],
        row["answer"],
        reason=row.get("stop_reason"),
        sources=tuple(row.get("sources", ())),
    )


# The in-process paths: `research`, or an `Orchestrator` with its defaults ("api").


async def run_orchestrator(
    questions: Sequence[Question],
    model: ChatModel,
    settings: Settings,
    *,
    corpus: Corpus | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    path: PathName = "orchestrator",
) -> list[Outcome]:
    """Each question run in turn in this process over the corpus, the run's answer and status
    judged: by `orchestrator.research` (path "orchestrator"), or by an `Orchestrator` with the
    corpus tools and every default (path "api")."""
    corpus = corpus or Corpus.from_folder(DOCS)
    outcomes = []
    for question in questions:
        outcome = await _run_one(question, model, corpus, settings, path)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


async def _run_one(
    question: Question, model: ChatModel, corpus: Corpus, settings: Settings, path: PathName
) -> Outcome:
    """One run; one that raises, or overruns its deadline by more than the grace below, is an
    `error` outcome rather than the end of the evaluation."""
    limits = Limits(
        deadline_s=settings.deadline_s,
        max_subtasks=settings.max_subtasks,
        agent=agents.AgentLimits(max_steps=settings.max_steps),
    )
    grace = max(30.0, settings.deadline_s / 2)
    start = time.perf_counter()
    result: RunResult[Any]
    try:
        with anyio.fail_after(settings.deadline_s + grace):
            if path == "api":
                orchestrator = Orchestrator(
                    model, research_tools(corpus), config=RunConfig(limits=limits)
                )
                result = await orchestrator.run(question.question)
            else:
                report = await research(
                    question.question, model=model, corpus=corpus, limits=limits
                )
                result = report.result
    except TimeoutError:
        reason = f"overran its {settings.deadline_s:g} s deadline by more than {grace:g} s"
        return _outcome(question, path, "error", "", reason=reason, seconds=_since(start))
    except Exception as exc:  # one question's failure is a data point, not the end of the run
        reason = f"{type(exc).__name__}: {exc}"[:500]
        return _outcome(question, path, "error", "", reason=reason, seconds=_since(start))
    sources = (e.source for r in result.reports for e in r.evidence)
    return _outcome(
        question,
        path,
        result.status,
        result.answer,
        reason=result.reason,
        sources=tuple(dict.fromkeys(sources)),
        seconds=_since(start),
    )


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 1)


# Both paths, and the results.


async def evaluate(
    questions: Sequence[Question],
    *,
    paths: Sequence[PathName],
    model_args: Sequence[str],
    open_chat_model: Callable[[], AbstractAsyncContextManager[ChatModel]],
    settings: Settings,
    env: Mapping[str, str] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[PathName, tuple[float, list[Outcome]]]:
    """Run `questions` through each of `paths` in turn; each path's wall seconds and outcomes.

    Args:
        questions: What to ask.
        paths: Any of "batch", "orchestrator" and "api".
        model_args: The `paor` options naming the model, for the batch.
        open_chat_model: Opens the same model in this process, for the orchestrator (an async
            context manager; opened only once the batch has ended, so that two local servers
            never share the machine).
        settings: The limits.
        env: The batch command's environment (default: ours).
        progress: Called with a line as each step ends.
    """
    done: dict[PathName, tuple[float, list[Outcome]]] = {}
    for path in paths:
        start = time.perf_counter()
        if path == "batch":
            outcomes = await run_batch(questions, model_args, settings, env=env)
        else:
            async with open_chat_model() as model:
                outcomes = await run_orchestrator(
                    questions, model, settings, on_outcome=lambda o: progress(_line(o)), path=path
                )
        done[path] = (_since(start), outcomes)
        progress(f"{path}: {len(outcomes)} questions in {done[path][0]:.0f} s")
    return done


def _line(outcome: Outcome) -> str:
    j = outcome.judgement
    return f"{outcome.path} {outcome.id}: {outcome.status}, {j.verdict} ({outcome.seconds} s)"


def results_json(
    questions: Sequence[Question],
    runs: Mapping[PathName, tuple[float, Sequence[Outcome]]],
    *,
    about: Mapping[str, Any],
    settings: Settings,
) -> dict[str, Any]:
    """Everything about an evaluation, as JSON-ready data: `about` (model, protocol, command...),
    the machine, the settings, and per path its seconds, outcomes and figures."""
    return {
        **about,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": settings.model_dump(),
        "questions": len(questions),
        "held_out": sum(q.held_out for q in questions),
        "unanswerable": sum(not q.answerable for q in questions),
        "paths": {
            path: {
                "seconds": seconds,
                "figures": {
                    split: f.model_dump(mode="json")
                    for split, f in splits(questions, outcomes).items()
                },
                "outcomes": [o.model_dump(mode="json") for o in outcomes],
            }
            for path, (seconds, outcomes) in runs.items()
        },
    }


# The command line.


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.honesty_eval",
        description="Count the wrong answers paor labels done, over a small policy corpus.",
    )
    model = parser.add_mutually_exclusive_group()
    model.add_argument("--gguf", type=Path, help="serve this GGUF file with the embedded server")
    model.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: embedded)")
    parser.add_argument("--model", help="the model name at --base-url")
    parser.add_argument("--protocol", choices=["auto", "tools", "json"], default="auto")
    parser.add_argument(
        "--paths", default=",".join(DEFAULT_PATHS), help="any of batch, orchestrator, api"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--questions", type=int, metavar="N", help="the first N questions")
    which.add_argument("--only", metavar="ID,...", help="these questions, by id")
    parser.add_argument("--deadline", type=float, default=90.0, help="seconds per question")
    parser.add_argument("--concurrency", type=int, default=2, help="batch goals at once")
    parser.add_argument("--max-steps", type=int, default=6, help="steps per agent")
    parser.add_argument("--max-subtasks", type=int, default=3, help="per research run")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    return parser


def _paths(text: str) -> list[PathName]:
    chosen = [p.strip() for p in text.split(",") if p.strip()]
    unknown = sorted(set(chosen) - set(PATHS))
    if unknown or not chosen:
        raise ValueError(f"--paths takes batch, orchestrator or api (or several), not {text!r}")
    return [p for p in PATHS if p in chosen]


def _about(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    if args.base_url:
        name, protocol = args.model or os.environ.get("PAOR_MODEL", "default"), args.protocol
    elif args.gguf:
        name, protocol = args.gguf.stem, args.protocol
    else:
        name, protocol = "SmolLM2-135M-Instruct (embedded)", "json"
    return {
        "command": " ".join(["python -m benchmarks.honesty_eval", *argv]),
        "model": name,
        "base_url": args.base_url,
        "gguf": str(args.gguf) if args.gguf else None,
        "protocol": protocol,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation from the command line; print the tables and write the JSON."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.base_url and not args.gguf and (args.model or args.protocol != "auto"):
        parser.error("--model and --protocol need --base-url or --gguf (SmolLM2 speaks JSON)")
    try:
        paths = _paths(args.paths)
        settings = Settings(
            deadline_s=args.deadline,
            max_steps=args.max_steps,
            max_subtasks=args.max_subtasks,
            concurrency=args.concurrency,
        )
        only = [i.strip() for i in args.only.split(",") if i.strip()] if args.only else []
        questions = select(load_questions(), count=args.questions, only=only)
    except ValueError as exc:
        parser.error(str(exc))
    structlog.configure(  # noqa: TID251 - an application: it configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    model_args = model_arguments(
        gguf=args.gguf, base_url=args.base_url, model=args.model, protocol=args.protocol
    )
    runs = anyio.run(
        lambda: evaluate(
            questions,
            paths=paths,
            model_args=model_args,
            open_chat_model=lambda: open_model(
                args.model, base_url=args.base_url, protocol=args.protocol, gguf=args.gguf
            ),
            settings=settings,
            progress=lambda line: print(f"  {line}", flush=True),
        )
    )
    about = _about(args, list(argv) if argv is not None else sys.argv[1:])
    results = results_json(questions, runs, about=about, settings=settings)
    print(render(results))
    write_json(results, args.out)
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
