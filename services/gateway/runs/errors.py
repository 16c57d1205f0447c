"""Why the run logic refuses a request, in its own terms; api/errors.py maps each to HTTP."""

from __future__ import annotations


class RunError(Exception):
    """Base of the refusals a caller can act on."""


class QuestionTooLong(RunError):
    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"question: {length} characters; the limit is {limit}")
        self.length = length
        self.limit = limit


class InvalidIdempotencyKey(RunError):
    def __init__(self, max_length: int) -> None:
        super().__init__(f"Idempotency-Key must be 1-{max_length} characters")
        self.max_length = max_length


class IdempotencyConflict(RunError):
    """The key was used before, with a different request."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"Idempotency-Key was already used for a different request (run {run_id})")
        self.run_id = run_id


class DependencyUnavailable(RunError):
    """A breaker is open: a run accepted now would only fail."""

    def __init__(self, reason: str, retry_after_s: float) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class QueueFull(RunError):
    """As many runs wait or execute as the queue may hold: accepting more would only
    grow Redis while each waits longer (RAGWAY_MAX_QUEUE_DEPTH)."""

    def __init__(self, depth: int, retry_after_s: float) -> None:
        super().__init__(f"{depth} runs are queued, the most the gateway accepts; retry later")
        self.depth = depth
        self.retry_after_s = retry_after_s


class RunNotFound(RunError):
    """No such run for this caller; another tenant's run is reported the same way."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run with id {run_id!r}")
        self.run_id = run_id


class RunAlreadyFinished(RunError):
    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"run {run_id} has already {status}")
        self.run_id = run_id
        self.status = status


class RunNotFinished(RunError):
    """Feedback is about an answer: the run has not ended yet."""

    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"run {run_id} is {status}: send feedback once it has ended")
        self.run_id = run_id
        self.status = status


class ConversationNotFound(RunError):
    """No such conversation for this caller (expired, or another key's: the same answer)."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"no conversation with id {conversation_id!r}")
        self.conversation_id = conversation_id


class ConversationTurnLimit(RunError):
    def __init__(self, conversation_id: str, limit: int) -> None:
        super().__init__(
            f"conversation {conversation_id} has reached its limit of {limit} turns; "
            "start a new conversation (omit conversation_id)"
        )
        self.conversation_id = conversation_id
        self.limit = limit


class ConversationTooLarge(RunError):
    def __init__(self, conversation_id: str, chars: int, limit: int) -> None:
        super().__init__(
            f"conversation {conversation_id} holds {chars} characters; the limit is {limit}; "
            "start a new conversation (omit conversation_id)"
        )
        self.conversation_id = conversation_id
        self.chars = chars
        self.limit = limit


class RunWaitTimedOut(RunError):
    """A caller waited for the end of a run longer than it would."""

    def __init__(self, run_id: str, waited_s: float) -> None:
        super().__init__(
            f"run {run_id} did not finish in {waited_s:g} s; read it later at /v1/runs/{run_id}"
        )
        self.run_id = run_id
        self.waited_s = waited_s
