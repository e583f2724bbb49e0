"""Contract review: parallel sub-agents read one contract each, and the run returns typed data.

The contracts are `contracts/`: three short service agreements of a made-up port. The planner
gives each contract its own sub-agent (with `read_doc`), and the run's answer is not prose but a
`Review`: one `Contract` record per agreement (supplier, annual fee, end date, notice period) and
the one that ends first, validated against the types below (`output_type=Review`). A reply that
does not fit them goes back to the model with the errors; a run that never gets a valid object
ends `incomplete` with `output` None, and says why.

    python examples/contract_review/main.py

The model is the endpoint in OPENAI_BASE_URL / OPENAI_API_KEY / PAOR_MODEL if one is set, else the
embedded local model.
"""

from __future__ import annotations

import datetime
import logging
import sys
from pathlib import Path

import anyio
from pydantic import BaseModel, Field

import agents
from agents import ChatModel, PaorError, open_model
from agents.toolkits import Corpus, research_tools
from orchestrator import Limits, Orchestrator, RunConfig, RunResult

HERE = Path(__file__).resolve().parent
CONTRACTS = HERE / "contracts"
GOAL = (
    "For each contract (harbour-cleaning, crane-maintenance, pilot-boats), find the supplier, "
    "the annual fee in EUR, the end date and the notice period in days; then say which one "
    "ends first."
)
CONFIG = RunConfig(
    limits=Limits(
        max_subtasks=3, max_concurrency=3, deadline_s=600, agent=agents.AgentLimits(max_steps=4)
    ),
    cite=True,
)


class Contract(BaseModel):
    """One agreement, as its text states it."""

    document: str = Field(description="The contract's document id, e.g. pilot-boats")
    supplier: str
    annual_fee_eur: int
    ends: datetime.date
    notice_days: int


class Review(BaseModel):
    """Every contract, and the one that ends first."""

    contracts: list[Contract]
    ends_first: str = Field(description="The document id of the contract that ends first")


async def review(model: ChatModel) -> RunResult[Review]:
    """Review the contracts with `model`: a `RunResult[Review]`, its `output` the data."""
    tools = research_tools(Corpus.from_folder(CONTRACTS))
    orch = Orchestrator(model, tools, config=CONFIG)
    return await orch.run(GOAL, output_type=Review)


def main() -> None:
    """Pick the model, review, and print the data (or why there is none)."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("paor").setLevel(logging.INFO)

    async def go() -> RunResult[Review]:
        async with open_model() as model:
            return await review(model)

    try:
        result = anyio.run(go)
    except PaorError as exc:
        sys.exit(f"contract review: {exc}")
    if result.output is None:
        sys.exit(f"contract review: {result.status}: {result.reason}")
    for contract in result.output.contracts:
        print(
            f"{contract.document}: {contract.supplier}, EUR {contract.annual_fee_eur:,} a year, "
            f"ends {contract.ends}, {contract.notice_days} days' notice"
        )
    print(f"ends first: {result.output.ends_first} ({result.status})")


if __name__ == "__main__":
    main()
