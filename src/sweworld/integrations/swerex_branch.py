"""Snapshot, fork and restore through a sweworld SWE-ReX runtime: sweworld's own routes and client.

SWE-ReX's protocol has no such operation (its routes: ``swerex.ROUTES``), and its client
``RemoteRuntime`` calls none but its own; so these are routes of sweworld's beside swerex's, at the
root and under ``/<episode>``, authenticated and answered (errors as HTTP 511) the same way:

- ``POST /snapshot`` -> ``{"snapshot_id"}``: the episode's files, its shell's cwd and exports, and each
  further session's (``Episode.snapshot``);
- ``POST /restore {"snapshot_id"}``: the episode back to one of its own snapshots;
- ``POST /release {"snapshot_id"}``: free one now (else freed when the episode closes);
- ``POST /fork {"snapshot_id": ID | null}`` -> ``{"episode"}``: a new episode in the snapshot's state
  (null: as it is now), addressed as ``http://HOST:PORT/<episode>/...`` (``<instance_id>@<hex>``) by
  any swerex client, with no session yet (sessions are processes: create one, it starts in the
  copied shell state); ``/<episode>/close`` closes it for good.

``BranchingRuntime`` is swerex's ``RemoteRuntime`` with these four calls (through its own request
helper, so errors re-raise as they do for swerex's calls); ``fork`` returns the runtime of the fork.
docs/branching_frameworks.md says what SWE-agent itself can and cannot do with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field
from swerex.runtime.remote import RemoteRuntime

if TYPE_CHECKING:
    from sweworld.integrations.swerex import RexServer

ROUTES = ("snapshot", "restore", "release", "fork")


class SnapshotRequest(BaseModel):
    """A restore or a release: which snapshot (an id ``/snapshot`` gave, of the same episode)."""

    snapshot_id: str


class SnapshotResponse(BaseModel):
    snapshot_id: str = Field(description="The new snapshot's id (restore, release, fork take it).")


class ForkRequest(BaseModel):
    snapshot_id: str | None = Field(default=None, description="The snapshot to fork (None: the episode now).")


class ForkResponse(BaseModel):
    episode: str = Field(description="The fork's name: address it as http://HOST:PORT/<episode>.")
    parent: str = Field(description="The name of the episode it was forked from.")


class BranchResponse(BaseModel):
    """A restore or release done."""


def add_routes(app: FastAPI, server: RexServer, prefix: str, call: Callable) -> None:
    """The four routes under ``prefix`` (``call(request, fn)``: swerex's answer of ``fn(episode)``)."""
    suffix = "_instance" if prefix else ""

    @app.post(f"{prefix}/snapshot", operation_id=f"snapshot{suffix}")
    async def snapshot(request: Request) -> Response:
        return await call(request, lambda episode: SnapshotResponse(snapshot_id=episode.snapshot()))

    @app.post(f"{prefix}/restore", operation_id=f"restore{suffix}")
    async def restore(request: Request, body: SnapshotRequest) -> Response:
        return await call(request, lambda episode: _done(episode.restore, body.snapshot_id))

    @app.post(f"{prefix}/release", operation_id=f"release{suffix}")
    async def release(request: Request, body: SnapshotRequest) -> Response:
        return await call(request, lambda episode: _done(episode.release, body.snapshot_id))

    @app.post(f"{prefix}/fork", operation_id=f"fork{suffix}")
    async def fork(request: Request, body: ForkRequest) -> Response:
        return await call(request, lambda episode: ForkResponse(episode=server.fork(episode, body.snapshot_id),
                                                                parent=episode.instance_id))


def _done(action: Callable[[str], None], snapshot_id: str) -> BranchResponse:
    action(snapshot_id)
    return BranchResponse()


class BranchingRuntime(RemoteRuntime):
    """swerex's ``RemoteRuntime`` plus sweworld's ``snapshot``, ``restore``, ``release`` and ``fork``."""

    async def snapshot(self) -> str:
        """A snapshot of the episode; its id."""
        return (await self._request("snapshot", None, SnapshotResponse)).snapshot_id

    async def restore(self, snapshot_id: str) -> None:
        await self._request("restore", SnapshotRequest(snapshot_id=snapshot_id), BranchResponse)

    async def release(self, snapshot_id: str) -> None:
        await self._request("release", SnapshotRequest(snapshot_id=snapshot_id), BranchResponse)

    async def fork(self, snapshot_id: str | None = None) -> BranchingRuntime:
        """The runtime of a new episode forked from ``snapshot_id`` (None: the episode now); close it
        with its ``close()``."""
        answer: ForkResponse = await self._request("fork", ForkRequest(snapshot_id=snapshot_id), ForkResponse)
        base = self._api_url.rstrip("/")
        if base.endswith(f"/{answer.parent}"):  # addressed as /<instance_id>: the fork sits beside it
            base = base[: -len(answer.parent) - 1]
        config: dict[str, Any] = {**self._config.model_dump(), "host": f"{base}/{answer.episode}", "port": None}
        return type(self)(logger=self.logger, **config)


__all__ = ["ROUTES", "BranchResponse", "BranchingRuntime", "ForkRequest", "ForkResponse", "SnapshotRequest",
           "SnapshotResponse", "add_routes"]
