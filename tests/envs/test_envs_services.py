"""The httpbin stand-in, built from PyPI and started the way the eval script starts it, answers
HTTP and HTTPS for httpbin.org inside an episode that reaches nothing else."""

from __future__ import annotations

import pytest

from sweworld.envs import EnvBuilder
from sweworld.envs.services import SERVICES_MOUNT, hosts, start_lines, stop_lines
from sweworld.sandbox import Dir, Layers, Sandbox, SandboxConfig

pytestmark = [pytest.mark.slow, pytest.mark.bwrap, pytest.mark.network]

CHECK = """python3 - <<'PY'
import json, os, socket, ssl, urllib.request
print("http", json.load(urllib.request.urlopen("http://httpbin.org/get"))["url"])
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
print("https", urllib.request.urlopen("https://httpbin.org/status/204", context=ctx).status)
import http.client
conn = http.client.HTTPConnection("httpbin.org", 80)
conn.request("GET", "/get"); r = conn.getresponse(); r.read()
print("connection", r.getheader("Connection"))
conn.request("POST", "/post", body=iter([b"abc", b"def"]), encode_chunked=True,
             headers={"Transfer-Encoding": "chunked"})
r = conn.getresponse(); print("chunked", r.status, json.loads(r.read())["data"])
s = socket.socket(); s.settimeout(0.5)
try:
    s.connect(("10.255.255.1", 80))
except OSError as exc:
    print("tarpit", type(exc).__name__)
PY"""


def test_httpbin_stand_in_answers_http_and_https(small_tree) -> None:
    tree, commit = small_tree
    service = EnvBuilder().service("httpbin")
    assert (service.venv / "ssl" / "ca.pem").is_file()
    mounts = {"/testbed": Layers([tree]), f"{SERVICES_MOUNT}/httpbin/venv": Dir(service.venv)}
    config = SandboxConfig(hosts=hosts(["httpbin"]))
    with Sandbox(mounts, config=config, base_commit=commit, ro_paths=[str(service.interpreter.prefix)]) as sb:
        script = "\n".join([*start_lines(["httpbin"]), CHECK, *stop_lines(["httpbin"])])
        out = sb.run(script, timeout=120).output
    assert "http http://httpbin.org/get" in out
    assert "https 204" in out
    assert "connection keep-alive" in out  # as httpbin.org says; werkzeug's server always closes
    assert "chunked 200 abcdef" in out  # werkzeug's server answers 501 to a chunked upload
    assert "tarpit TimeoutError" in out or "tarpit timeout" in out  # hangs, not "network unreachable"
