"""Local stand-ins of public hosts: the episode's own /etc/hosts and a server on a low port."""

from __future__ import annotations

import pytest

from sweworld.sandbox import Layers, Sandbox, SandboxConfig

pytestmark = pytest.mark.bwrap

SERVE = ("python3 -c 'import http.server, socketserver; socketserver.TCPServer.allow_reuse_address = True; "
         "http.server.HTTPServer((\"127.0.0.1\", 80), http.server.SimpleHTTPRequestHandler).serve_forever()' "
         ">/dev/null 2>&1 &")
FETCH = ("python3 -c 'import time, urllib.request\n"
         "for _ in range(100):\n"
         "    try: print(urllib.request.urlopen(\"http://httpbin.org/README\").read().decode()); break\n"
         "    except OSError: time.sleep(0.1)'")


def test_stand_in_host_resolves_inside_the_episode_only(small_tree) -> None:
    tree, commit = small_tree
    config = SandboxConfig(hosts={"httpbin.org": "127.0.0.1"})
    with Sandbox({"/testbed": Layers([tree])}, config=config, base_commit=commit) as sb:
        assert "127.0.0.1" in sb.run("getent hosts httpbin.org").output
        assert sb.run("getent hosts localhost").exit_code == 0  # the host's own entries are kept
        assert sb.run(SERVE).exit_code == 0
        assert "small tree" in sb.run(FETCH, timeout=60).output
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as plain:
        assert plain.run("getent hosts httpbin.org").exit_code != 0  # no network, no such name


def test_the_sandbox_resolves_its_own_host_name(small_tree) -> None:
    """As in a container: dask's and modin's workers look up gethostbyname(gethostname())."""
    tree, commit = small_tree
    lookup = "python3 -c 'import socket; print(socket.gethostname(), socket.gethostbyname(socket.gethostname()))'"
    for config in (SandboxConfig(), SandboxConfig(hosts={"httpbin.org": "127.0.0.1"})):
        with Sandbox({"/testbed": Layers([tree])}, config=config, base_commit=commit) as sb:
            result = sb.run(lookup)
            assert result.exit_code == 0 and result.output.split() == ["sandbox", "127.0.0.1"], result.output
            assert sb.run("cat /etc/hostname").output.strip() == "sandbox"
