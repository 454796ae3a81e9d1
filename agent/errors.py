"""Errors, drawn once:

    IncidentBotError
     ├── InputError            bad input from a person: unknown project, empty question…
     ├── IllegalTransition     a state change the Investigation does not allow
     ├── ConcurrencyError      a save lost the optimistic-version race
     ├── StaleDraft            an edit or approval that names an old version or hash
     ├── NotFound              no such investigation, evidence or job
     └── SourceUnavailable     a tool source cannot be reached at all (stops the run)

    ToolFailure                a tool call went wrong in a way the *model* should read
                               and react to; never raised past the loop.

Only `ToolFailure` ever reaches the model, as a tool result; the others are ours.
"""


class IncidentBotError(Exception):
    """Base of every error incident-bot raises on purpose."""


class InputError(IncidentBotError):
    """The request cannot be accepted as given; the message says why, in one line."""


class IllegalTransition(IncidentBotError):
    pass


class ConcurrencyError(IncidentBotError):
    pass


class StaleDraft(IncidentBotError):
    pass


class NotFound(IncidentBotError):
    pass


class SourceUnavailable(IncidentBotError):
    pass


class ToolFailure(Exception):
    """A failed tool call, reported back to the model as the call's result."""
