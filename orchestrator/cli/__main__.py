"""`python -m orchestrator.cli`: the `paor` command."""

from orchestrator.cli import entry

entry()
