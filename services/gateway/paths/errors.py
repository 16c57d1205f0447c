"""Why a path or canary command is refused; api/errors.py maps each to HTTP."""

from __future__ import annotations


class PathError(Exception):
    """Base of the refusals an operator can act on; nothing was changed."""


class InvalidPathName(PathError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"path name {name!r} must be 1-64 of a-z, 0-9, '_' or '-', starting with a letter"
        )


class UnknownPath(PathError):
    def __init__(self, name: str, version: int | None = None) -> None:
        which = f"{name!r} version {version}" if version else repr(name)
        super().__init__(f"no path {which}; set it first with 'ragway paths set {name} ...'")


class UnknownBuild(PathError):
    def __init__(self, build: str, detail: str) -> None:
        super().__init__(f"the retriever knows no build {build!r}: {detail}")


class UnknownReranker(PathError):
    def __init__(self, reranker: str, offered: list[str]) -> None:
        listed = ", ".join(offered) or "none"
        super().__init__(
            f"the retriever offers no reranker {reranker!r} (offered: {listed}); load it with "
            "RAGWAY_RERANKER_OFFERED_PATHS"
        )


class RetrieverUnavailable(PathError):
    def __init__(self, detail: str) -> None:
        super().__init__(f"the retriever could not check the build or reranker: {detail}")


class CanaryRunning(PathError):
    def __init__(self, experiment: str) -> None:
        super().__init__(
            f"experiment {experiment} is running; stop it first ('ragway canary stop')"
        )


class NoCanary(PathError):
    def __init__(self) -> None:
        super().__init__("no canary or shadow is running")


class InvalidCandidate(PathError):
    def __init__(self, name: str) -> None:
        super().__init__(f"the candidate must be a path other than baseline, not {name!r}")


class InvalidSteps(PathError):
    def __init__(self, detail: str) -> None:
        super().__init__(f"invalid canary steps: {detail}")


class CanaryStepping(PathError):
    def __init__(self, steps: list[float]) -> None:
        listed = ",".join(f"{s:g}" for s in steps)
        super().__init__(
            f"the experiment steps through {listed} % on its own; pause, promote or stop it "
            "instead of setting its percent"
        )
