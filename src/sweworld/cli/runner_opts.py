"""The options every command that fans work out shares: where the items run.

``--runner local`` (default) runs them in a thread pool here (``--workers`` at once); ``--runner ray``
makes each a Ray task (extra ``[ray]``) on the cluster at ``--ray-address`` (``auto``: the one this
node belongs to; omitted: a Ray started on this machine), ``--workers`` at most in flight.
"""

from __future__ import annotations

from typing import Annotated

import typer

from sweworld.cli import params

RunnerName = Annotated[str, typer.Option(
    "--runner", callback=params.one_of("local", "ray"),
    help="local (a thread pool here) or ray (each item a Ray task; needs the ray extra).")]
RayAddress = Annotated[str | None, typer.Option(
    "--ray-address", help="ray: the cluster, 'auto' (the one this node joined) or HOST:PORT of its head; "
    "omitted: start Ray on this machine.")]

