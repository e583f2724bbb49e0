"""A run's events, kept by its workflow and read by the caller through an update that waits.

Temporal has no push from a workflow to its caller. The caller asks for the events after the ones
it has (`RunWorkflow.events`), and the update returns as soon as there are some: a long poll, not a
poll. Each page read goes into the run's history, so pages are bounded and nothing is read unless
a caller watches. A watched run waits, briefly, for its reader to take the last page before it
returns, so a caller never misses the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from orchestrator._events import Event

__all__ = ["PAGE_SIZE", "EventLog", "EventPage"]

PAGE_SIZE = 200
"""Events per page at most (a page is one update result in the run's history)."""


class EventPage(BaseModel):
    """Events of a run, from a position on.

    Attributes:
        events: The events.
        next: The position to ask from next.
        done: Whether these were the run's last events.
    """

    model_config = ConfigDict(frozen=True)

    events: tuple[Event, ...] = ()
    next: int = 0
    done: bool = False


@dataclass(kw_only=True, slots=True)
class EventLog:
    """The events a workflow has emitted so far, and whether its reader has seen the end."""

    events: list[Event] = field(default_factory=list)
    closed: bool = False
    watched: bool = False
    drained: bool = False

    def append(self, event: Event) -> None:
        """Keep `event`."""
        self.events.append(event)

    def close(self) -> None:
        """No more events will come."""
        self.closed = True

    def has_news(self, after: int) -> bool:
        """Whether a reader that has `after` events has something to read (more, or the end)."""
        return self.closed or len(self.events) > after

    def page(self, after: int) -> EventPage:
        """The events after the first `after` (at most `PAGE_SIZE`); marks the log watched."""
        self.watched = True
        end = min(len(self.events), after + PAGE_SIZE)
        done = self.closed and end == len(self.events)
        self.drained = self.drained or done
        return EventPage(events=tuple(self.events[after:end]), next=end, done=done)

    def peek(self) -> EventPage:
        """Every event so far, changing nothing (what a query may do)."""
        return EventPage(events=tuple(self.events), next=len(self.events), done=self.closed)

    def unread_end(self) -> bool:
        """Whether a reader is watching and has not yet taken the last page."""
        return self.watched and not self.drained
