"""Search over live episodes (``docs/branching_rollouts.md``): continuing an agent from a snapshot, and a
small best-first tree search built on it.

- :func:`resume_policy` brings a fresh policy to where a prefix of an episode leaves it: a policy with
  ``resume(task, messages, steps)`` does it itself; a scripted one (``ScriptedPolicy``: its actions
  come from its script, not from the messages) is reset and replays the prefix, seeing the prefix's
  observations (its own first ``steps`` actions are dropped); any other policy (a chat model) is
  reset and acts on the messages alone.
- :func:`continuation` is the ``AgentRun`` of one branch: a fork of a snapshot, the prefix's messages,
  steps and tools, a policy resumed there.
- :func:`best_first`: a node is a live episode, a snapshot of it and the trajectory that led there,
  scored by a verifier (``Verifier.score(task, trajectory)``: the diff so far, for a node that has not
  ended). The most promising node of the frontier is expanded: ``children`` forks of its snapshot,
  each continued ``steps`` steps with its own policy sample. A child whose episode ended is a leaf; the
  others join the frontier. After ``budget`` expansions the best leaf is the answer (the best node
  when none ended, as truncated). Every node's episode stays open until the search ends (a snapshot
  lives as long as the episode that took it), so the search holds ``budget * children + 1`` episodes
  at most.

Agents see only ``Executor`` and ``Branchable`` (``core.protocols``): the search runs on whatever
episode it is given (real, sim, hybrid).
"""

from __future__ import annotations

import copy
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sweworld.agents.config import AgentConfig
from sweworld.agents.loop import AgentRun
from sweworld.agents.policies import ScriptedPolicy
from sweworld.core.errors import ConfigError
from sweworld.core.executor import Executor
from sweworld.core.protocols import Bindable, Policy, Verifier, why_not_branchable
from sweworld.core.types import Task
from sweworld.tools import ToolSet
from sweworld.trajectory import Trajectory


def resume_policy(policy: Policy, task: Task, messages: list[dict], steps: int,
                  schemas: list[dict] | None = None) -> Policy:
    """``policy`` (fresh, or bound to its sample) brought to the end of the first ``steps`` steps of
    ``messages`` (see the module docstring); returns it."""
    resume = getattr(policy, "resume", None)
    if callable(resume):
        resume(task, messages, steps)
        return policy
    policy.reset(task)
    if isinstance(policy, ScriptedPolicy):
        for index in range(steps):  # what it was shown before step index: 2 messages per step
            policy.act(messages[:2 + 2 * index], schemas)
    return policy


def bound(make_policy: Callable[[], Policy], instance_id: str, sample: int) -> Policy:
    """A new policy of ``make_policy`` for ``sample`` (bound to it when it draws per sample)."""
    policy = make_policy()
    return policy.bind(instance_id, sample) if isinstance(policy, Bindable) else policy


def need_branchable(executor: Executor, what: str = "branching") -> None:
    """A ``ConfigError`` saying why ``executor`` cannot be forked, when it cannot."""
    reason = why_not_branchable(executor)
    if reason:
        raise ConfigError(f"{what} needs episodes that can be snapshotted and forked: {reason}",
                          hint="use the real, sim or hybrid backend (--backend real|sim|hybrid)")


def continuation(task: Task, executor: Executor, policy: Policy, config: AgentConfig, prefix: Trajectory,
                 tools: ToolSet, sample: int) -> AgentRun:
    """The run of one branch in ``executor`` (a fork of the prefix's snapshot): ``prefix``'s messages and
    steps, a copy of its ``tools``, ``policy`` resumed at its end."""
    schemas = None if config.text_actions else tools.schemas()
    resume_policy(policy, task, prefix.messages, len(prefix.steps), schemas)
    return AgentRun(task, executor, policy, config, copy.deepcopy(tools), sample, prefix=prefix)


@dataclass
class Node:
    """A point of the search: a live episode, its snapshot, the trajectory that led there."""

    id: int
    parent: int | None
    executor: Executor
    handle: Any
    trajectory: Trajectory
    tools: ToolSet
    score: float
    ended: bool = False


@dataclass
class SearchResult:
    """What :func:`best_first` found: ``best`` (a leaf when one ended), every node, the expansions made."""

    best: Trajectory
    best_node: int
    nodes: list[Node] = field(default_factory=list)
    expansions: int = 0

    @property
    def leaves(self) -> list[Node]:
        return [n for n in self.nodes if n.ended]


def _scored(verifier: Verifier, task: Task, traj: Trajectory, executor: Executor, ended: bool) -> float:
    """The verifier's score of ``traj``; a node that has not ended is scored on its diff so far, as
    an episode stopped by its step limit."""
    if not ended:
        traj = traj.model_copy(update={"patch": executor.diff(), "exit_status": "step_limit"})
    return float(verifier.score(task, traj))


def best_first(task: Task, root: Executor, make_policy: Callable[[], Policy], config: AgentConfig,
               verifier: Verifier, *, children: int = 2, steps: int = 3, budget: int = 4,
               tools: ToolSet | None = None) -> SearchResult:
    """Best-first search from ``root`` (a fresh episode of ``task``, left open for the caller to close;
    see the module docstring). Child ``n`` of the whole search runs a policy of ``make_policy`` bound
    to sample ``n`` (1, 2, ...). Ties go to the deeper node, then the older one."""
    need_branchable(root, "a tree search")
    start = AgentRun(task, root, bound(make_policy, task.instance_id, 0), config, tools)
    start.run(until=0)
    nodes = [Node(0, None, root, root.snapshot(), start.traj, start.tools, 0.0)]
    frontier: list[tuple[float, int, int]] = [(0.0, 0, 0)]  # (-score, -depth, id)
    samples = itertools.count(1)
    expansions = 0
    try:
        while frontier and expansions < budget:
            _, _, picked = heapq.heappop(frontier)
            parent = nodes[picked]
            expansions += 1
            for _ in range(children):
                sample = next(samples)
                fork = parent.executor.fork(parent.handle)
                try:
                    run = continuation(task, fork, bound(make_policy, task.instance_id, sample), config,
                                       parent.trajectory, parent.tools, sample)
                    traj = run.run(until=len(parent.trajectory.steps) + steps)
                    if not run.paused and traj.failed:  # a model or infrastructure failure: no node
                        fork.close()
                        continue
                    ended = not run.paused
                    node = Node(len(nodes), parent.id, fork, None if ended else fork.snapshot(), traj, run.tools,
                                _scored(verifier, task, traj, fork, ended), ended)
                except BaseException:
                    fork.close()
                    raise
                nodes.append(node)
                if ended:
                    fork.close()
                else:
                    heapq.heappush(frontier, (-node.score, -len(traj.steps), node.id))
        leaves = [n for n in nodes if n.ended] or [n for n in nodes[1:]] or nodes
        chosen = max(leaves, key=lambda n: (n.score, len(n.trajectory.steps), -n.id))
        best = chosen.trajectory.model_copy(deep=True)
        if not chosen.ended:
            best.patch, best.exit_status = chosen.executor.diff(), "step_limit"
        return SearchResult(best=best, best_node=chosen.id, nodes=nodes, expansions=expansions)
    finally:
        for node in reversed(nodes[1:]):
            if not node.ended:
                node.executor.close()
        root.release(nodes[0].handle)


__all__ = ["Node", "SearchResult", "best_first", "bound", "continuation", "need_branchable", "resume_policy"]
