"""Errors, drawn once:

    IncidentBotError
     ├── InputError            bad input from a person: unknown project, empty question…
     │    └── IdempotencyConflict   an Idempotency-Key reused for another approved body
     ├── IllegalTransition     a state change the Investigation does not allow
     ├── ConcurrencyError      a save lost the optimistic-version race
     ├── StaleDraft            an edit or approval that names an old version or hash
     ├── NotFound              no such investigation, evidence or job
     ├── SourceUnavailable     a tool source cannot be reached at all (stops the run)
     └── PublishError          publishing an approved draft (agent.publish) went wrong
          ├── PublishFailed         the tracker said no, or a step failed for good: retrying
          │                         the same call will not help (4xx, a validation error)
          ├── PublishUnknown        the answer was lost (timeout, dropped connection, 5xx):
          │                         the write may or may not have happened
          └── CompensationFailed    undoing a step failed; the rest of the rollback went on,
                                    and this is raised for a human with the log

    ToolFailure                a tool call went wrong in a way the *model* should read
                               and react to; never raised past the loop.

Only `ToolFailure` ever reaches the model, as a tool result; the others are ours.
"""


class IncidentBotError(Exception):
    """Base of every error incident-bot raises on purpose."""


class InputError(IncidentBotError):
    """The request cannot be accepted as given; the message says why, in one line.
    `field` names the input it is about (a draft's "title" or "body"), when one is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


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


class IdempotencyConflict(InputError):
    """The same Idempotency-Key came with another approved body (version, hash)."""


class PublishError(IncidentBotError):
    """Base of what publishing an approved draft raises."""


class PublishFailed(PublishError):
    """The tracker refused, or a step failed for good. `status` is the HTTP status when
    there was one; `retryable` when waiting may help (a rate limit), `retry_after` the
    seconds the service asked to wait (its Retry-After), when it said."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class PublishUnknown(PublishError):
    """The answer was lost: the write may or may not have happened."""


class CompensationFailed(PublishError):
    """One or more compensations failed; the others ran. A human has to finish the rollback."""
