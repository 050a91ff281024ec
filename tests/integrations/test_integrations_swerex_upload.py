"""swerex's ``/upload`` streamed with bounded memory: a small zip that expands to 300 MB, sent by
swe-rex's own ``RemoteRuntime`` to ``sweworld runtime serve`` in a process of its own (its peak
memory read from /proc), and the pieces of ``swerex_upload`` on a real sandbox and on an episode that
cannot append (the shell route)."""

from __future__ import annotations

import asyncio
import io
import os
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("swerex")

from swerex.runtime.abstract import Command, UploadRequest
from swerex.runtime.remote import RemoteRuntime

from sweworld.core.errors import ConfigError
from sweworld.integrations import swerex_upload
from sweworld.sandbox import Dir, Sandbox
from sweworld.tasks import save_tasks

KEY = "sweworld-upload-key"
BIG = 300 * 1024 * 1024


def real(test):
    return pytest.mark.network(pytest.mark.bwrap(test))


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@real
@pytest.mark.slow
def test_a_zip_that_expands_to_300_mb_is_written_with_bounded_memory(task, backend, tmp_path):
    backend.prepare(task)  # built here, so the server's own memory is not an environment build's
    dataset = save_tasks([task], tmp_path / "tasks.jsonl")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "sweworld.cli.app", "runtime", "serve", "--port", str(port),
                               "--api-key", KEY, "--dataset", str(dataset), "--instance-ids", task.instance_id],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        rt = RemoteRuntime(host=f"http://127.0.0.1:{port}", auth_token=KEY)
        bundle = tmp_path / "bundle"
        bundle.mkdir()
        with open(bundle / "zeros.bin", "wb") as handle:
            handle.truncate(BIG)  # RemoteRuntime zips the directory: 300 MB of zeros pack into ~300 KB

        async def go() -> str:
            for _ in range(600):
                if server.poll() is not None:
                    pytest.fail(f"the server exited: {server.stderr.read().decode()[-2000:]}")
                try:
                    if (await rt.is_alive(timeout=5)).is_alive:
                        break
                except Exception:
                    pass
                await asyncio.sleep(0.5)
            first = await rt.execute(Command(command="echo up", shell=True))
            assert first.stdout == "up\n"
            before = _kib(server.pid, "VmRSS")
            await rt.upload(UploadRequest(source_path=str(bundle), target_path="/tmp/up"))
            size = await rt.execute(Command(command="stat -c %s /tmp/up/zeros.bin; rm /tmp/up/zeros.bin", shell=True))
            grown = _kib(server.pid, "VmHWM") - before
            assert grown < 100 * 1024, f"the server grew by {grown} KiB to write {BIG} bytes"
            return size.stdout
        assert asyncio.run(go()) == f"{BIG}\n"
    finally:
        server.terminate()
        server.wait(60)


class NoAppend:
    """An episode that writes text files and runs commands, but appends nothing (as a simulated one)."""

    def __init__(self, sandbox: Sandbox):
        self.sandbox, self.texts = sandbox, []

    def write_file(self, path: str, content: str) -> None:
        self.texts.append(path)
        self.sandbox.write_file(path, content)

    def run(self, command: str, **kw):
        return self.sandbox.run(command, **kw)


@pytest.mark.bwrap
def test_pieces_reach_the_episode_whole_by_either_route(tmp_path, monkeypatch):
    monkeypatch.setattr(swerex_upload, "CHUNK", 1000)  # many pieces from a small file
    data = os.urandom(4321)
    with Sandbox({"/testbed": Dir(tmp_path)}) as sb:
        def stateless(ex, program):
            return ex.run(program, timeout=60)
        assert swerex_upload.write_stream(sb, "/tmp/a/b.bin", io.BytesIO(data), stateless) == len(data)
        assert sb.read_bytes("/tmp/a/b.bin") == data
        other = NoAppend(sb)
        assert swerex_upload.write_stream(other, "/tmp/c.bin", io.BytesIO(data), stateless) == len(data)
        assert sb.read_bytes("/tmp/c.bin") == data and other.texts == []  # binary: through the shell
        swerex_upload.write_stream(other, "/tmp/d.txt", io.BytesIO(b"short text\n"), stateless)
        assert other.texts == ["/tmp/d.txt"] and sb.read_file("/tmp/d.txt") == "short text\n"
        swerex_upload.write_stream(sb, "/tmp/e.txt", io.BytesIO(b""), stateless)
        assert sb.read_bytes("/tmp/e.txt") == b""


def test_a_zip_declaring_more_than_the_limit_is_refused_before_anything_is_written(monkeypatch):
    monkeypatch.setattr(swerex_upload, "LIMIT", 10_000)
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big", b"\0" * 20_000)
    ran: list[str] = []
    with pytest.raises(ConfigError, match="expands to 20000 bytes"):
        swerex_upload.extract(object(), packed, "/tmp/x", lambda _ex, program: ran.append(program))  # type: ignore[arg-type]
    assert ran == []
    with pytest.raises(ConfigError, match="not a zip file"):
        swerex_upload.extract(object(), io.BytesIO(b"not a zip"), "/tmp/x", lambda *_: None)  # type: ignore[arg-type]
