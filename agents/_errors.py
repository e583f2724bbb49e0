"""The error classes of `agents`: the tree they form, and who must act on each, is drawn in
`agents.errors`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory._errors import PaorError

if TYPE_CHECKING:
    from agents.models._model import Usage

__all__ = [
    "ConfigurationError",
    "MalformedResponse",
    "ModelError",
    "ModelRequestError",
    "ModelRetryableError",
    "ReplayDrift",
    "ReplayedCancellation",
    "RunError",
    "ToolFailure",
]


class ConfigurationError(PaorError):
    """The API was misused: a bad tool definition, an impossible limit, a missing setting."""


class RunError(PaorError):
    """A run could not go on."""


class ModelError(RunError):
    """The model endpoint failed."""


class ModelRetryableError(ModelError):
    """A transient model failure: worth retrying after `retry_after` seconds, if given.

    Args:
        message: What happened.
        retry_after: The server's Retry-After hint in seconds, if it sent one.
        status: The HTTP status, if there was a response.
        resend: Whether the same request may be sent again at once (False: a local server went
            silent while working on it, and a copy would wait behind it or start it over).

    Attributes:
        reported: The model already showed the endpoint's answer to its admission (see
            `agents.models.AdmittedModel`).
    """

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        resend: bool = True,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status
        self.resend = resend
        self.reported = False


class ModelRequestError(ModelError):
    """The endpoint refused the request (400, 401, 403, 404...): retrying cannot help.

    Args:
        message: What happened.
        status: The HTTP status.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class MalformedResponse(ModelError):
    """The model's reply could not be parsed into a decision.

    Args:
        message: What was wrong, phrased so that the model can fix it.
        raw: The raw text the model produced.
        usage: What the unreadable reply cost, when the endpoint said (it answered, and bills
            the tokens): the loops charge it to their budget like any reply.
    """

    def __init__(self, message: str, *, raw: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.usage = usage


class ReplayDrift(RunError):
    """A replay asked for an effect other than the one recorded at that place.

    Args:
        message: What differs.
        agent_id: The agent that asked.
        seq: The effect's place in the agent's sequence.
        expected: What the journal holds there.
        got: What the code asked for.
    """

    def __init__(self, message: str, *, agent_id: str, seq: int, expected: str, got: str) -> None:
        super().__init__(message)
        self.agent_id = agent_id
        self.seq = seq
        self.expected = expected
        self.got = got


class ReplayedCancellation(PaorError):
    """Raised by a journaled effect that was cut short (a stop or a deadline) when it was
    recorded: the loop must behave as if its own scope had been cancelled at that point."""


class ToolFailure(PaorError):
    """Raised by a tool to report a failure the model should see and work around.

    The message is passed to the model verbatim, so it should say what went wrong and, if possible,
    what to try instead.

    Args:
        message: What went wrong, for the model.
        bad_call: The call itself was at fault (an unknown id, an impossible date), not the
            service behind the tool: such failures do not count toward the tool's circuit
            breaker, which measures the tool's health.
    """

    def __init__(self, message: str, *, bad_call: bool = False) -> None:
        super().__init__(message)
        self.bad_call = bad_call
