"""The candidate check as one picklable work item: ``Checker(index, mutation)`` runs where the runner
puts it (a thread here, a Ray worker elsewhere) and reuses one episode of the release per thread of
that process (``CandidateRun``: its fork server pays the interpreter and pytest import once). On a
node whose environment store lacks the release's install layer (the driver prepared it in its own),
the node's builder makes it (or fetches it from a node that has it) first.

Episodes are registered per checker (``token``); ``close_episodes(token)`` closes this process's,
and a worker process closes its own when it exits.
"""

from __future__ import annotations

import atexit
import threading
import uuid
from dataclasses import dataclass, field

from sweworld.core.errors import InfraError
from sweworld.synth import Mutation
from sweworld.synth.check import Outcome, StatementWriter, check_candidate, test_budgets
from sweworld.synth.release import Release
from sweworld.synth.runs import CandidateRun

_LOCAL = threading.local()
_OPEN: dict[str, list[CandidateRun]] = {}
_LOCK = threading.Lock()


def close_episodes(token: str) -> None:
    """Close the episodes this process opened for checker ``token``."""
    with _LOCK:
        episodes = _OPEN.pop(token, [])
    for episode in episodes:
        episode.close()


def _close_all() -> None:
    for token in list(_OPEN):
        close_episodes(token)


atexit.register(_close_all)


@dataclass
class Checker:
    """Screens and validates one candidate of ``release`` (``check.check_candidate``)."""

    release: Release
    timeout: float
    naive: bool = False
    statement: StatementWriter | None = None
    fork_server: bool = True
    known: dict[str, Outcome] = field(default_factory=dict)
    """Outcomes of an earlier run (the work directory's cache): returned, not checked again."""
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _episode(self) -> CandidateRun:
        runs = getattr(_LOCAL, "runs", None)
        if runs is None:
            runs = _LOCAL.runs = {}
        if runs.get(self.token) is None:
            layer = self.release.layer
            if not layer.path.exists():  # prepared on another node: this node's own (built, or fetched)
                from sweworld.envs import EnvBuilder
                layer = EnvBuilder().instance(self.release.task)
            run = CandidateRun(self.release.task, layer, timeout=self.timeout,
                               label=f"{self.release.slug}-synth", fork_server=self.fork_server)
            run.set_budgets(test_budgets(self.release), self.timeout)
            runs[self.token] = run
            with _LOCK:
                _OPEN.setdefault(self.token, []).append(run)
        return runs[self.token]

    def __call__(self, index: int, mutation: Mutation) -> Outcome:
        if mutation.key in self.known:
            return self.known[mutation.key].model_copy(update={"index": index})
        try:
            return check_candidate(self.release, mutation, index, timeout=self.timeout, naive=self.naive,
                                   statement=self.statement, run=self._episode())
        except InfraError as exc:
            run = _LOCAL.runs.pop(self.token, None) if getattr(_LOCAL, "runs", None) else None
            if run is not None:  # the next candidate gets a fresh episode
                with _LOCK:
                    if run in _OPEN.get(self.token, []):
                        _OPEN[self.token].remove(run)
                run.close()
            return Outcome(index=index, key=mutation.key, method=mutation.kind, path=mutation.path,
                           status="error", reason=str(exc).splitlines()[0])
