"""Local stand-ins for what a repository's tests reach over the network (pure data; no I/O here).

SWE-bench's containers reach the internet; episodes here never do. Where a repository's tests
call a public service, a recipe lists a stand-in (``EnvRecipe.services``) and the eval script starts
it inside the episode's own network namespace (loopback only), resolves the public host names the
tests call to it (the episode's own ``/etc/hosts``), and stops it after the tests. Each stand-in is a pinned virtualenv of a PyPI
package, built once under ``$SWEWORLD_HOME/services`` and mounted read-only at
``/sweworld/services/<name>``.

Which repositories get which stand-in (documented in docs/swebench.md):

| repository     | stand-in  | switch                                                        |
| -------------- | --------- | ------------------------------------------------------------- |
| psf/requests   | httpbin   | ``httpbin.org`` resolves to the episode's own HTTP (80) and    |
|                |           | HTTPS (443) servers; ``REQUESTS_CA_BUNDLE`` trusts their CA    |
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field

from sweworld.core.types import ServiceLines

SERVICES_MOUNT = "/sweworld/services"


@dataclass(frozen=True)
class StandIn:
    """One local service: what to install, how to start it, what the tests are told."""

    name: str
    packages: tuple[str, ...]
    python: str
    servers: tuple[tuple[int, str], ...]
    """(port, shell command) pairs; commands see ``{python}``, ``{port}`` and ``{home}`` (the venv)."""
    setup: str = ""
    """Build-time shell lines run after the install, with ``$VENV`` the venv (e.g. a CA and a cert)."""
    prepare: str = ""
    """Eval-script lines run before the servers start (``{home}``: the venv), inside the episode."""
    hosts: tuple[str, ...] = ()
    """Host names the episode resolves to 127.0.0.1 (its own /etc/hosts)."""
    env: dict[str, str] = field(default_factory=dict)
    """Exports for the tests; values see ``{home}``."""

    @property
    def key(self) -> str:
        """Content hash of what is built (the build directory's name)."""
        payload = json.dumps({"packages": self.packages, "python": self.python, "setup": self.setup},
                             sort_keys=True)
        return f"{self.name}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"

    def home(self) -> str:
        return f"{SERVICES_MOUNT}/{self.name}/venv"


#: httpbin.org runs httpbin under gunicorn: HTTP/1.1 keep-alive (``Connection: keep-alive``) and chunked
#: uploads, which werkzeug's development server refuses (it always closes, and answers 501 to a
#: chunked body); requests' old tests check both.
_HTTPBIN = ("{python} -I -m gunicorn --bind 127.0.0.1:{port} --worker-class gthread --threads 16 "
            "--keep-alive 5 --graceful-timeout 1%s httpbin:app")
#: A CA and a certificate for the stand-in's host names (valid ten years), made at build time.
_CERTS = r"""
mkdir -p "$VENV/ssl" && cd "$VENV/ssl"
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=sweworld stand-in CA" -keyout ca.key -out ca.pem
openssl req -newkey rsa:2048 -nodes -subj "/CN=httpbin.org" -keyout server.key -out server.csr
printf 'subjectAltName=DNS:httpbin.org,DNS:www.httpbin.org,DNS:localhost,IP:127.0.0.1\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -extfile san.ext -out server.pem
rm -f ca.key server.csr
"""

#: Inside the episode (its own network namespace, where the sandbox holds the capabilities): the
#: default route goes to the loopback device, where packets for addresses that are not local are
#: dropped, so a connection to such an address hangs
#: (as an unroutable address does on the internet: requests' TARPIT connect-timeout tests) instead of
#: failing with "network unreachable"; the stand-in CA is appended to the CA bundles the packages
#: in the episode's venv ship and to those of the checkout's top-level packages (requests passes its
#: own bundle explicitly, and ``Session.send`` ignores ``REQUESTS_CA_BUNDLE``, so neither
#: SSL_CERT_FILE nor that variable is enough). These lines run in the eval script, after the patch
#: was taken; every change stays in the episode's copy-on-write layers.
_INTERNET_STAND_IN = r"""
if command -v ip >/dev/null 2>&1; then
  ip route add default dev lo 2>/dev/null || echo "sweworld: no tarpit route (ip failed)"
fi
for bundle in /sweworld/venv/lib/python*/site-packages/{certifi,requests,pip/_vendor/certifi}/cacert.pem ./*/cacert.pem; do
  [ -f "$bundle" ] && ! grep -q "sweworld stand-in CA" "$bundle" && \
    { printf '\n# sweworld stand-in CA\n'; cat {home}/ssl/ca.pem; } >> "$bundle"
done
true
"""

STAND_INS: dict[str, StandIn] = {
    "httpbin": StandIn(
        name="httpbin",
        packages=("httpbin==0.10.4", "Flask==3.1.3", "Werkzeug==3.1.9", "Jinja2==3.1.6", "MarkupSafe==3.0.4",
                  "itsdangerous==2.2.0", "click==8.5.1", "blinker==1.9.0", "brotlicffi==1.2.1.0",
                  "cffi==2.1.1", "pycparser==3.12", "decorator==5.3.1", "greenlet==2.0.2", "six==1.17.0",
                  "gunicorn==23.0.0", "packaging==26.4"),
        python="3.11",
        servers=((80, _HTTPBIN % ""),
                 (443, _HTTPBIN % " --certfile {home}/ssl/server.pem --keyfile {home}/ssl/server.key")),
        setup=_CERTS,
        prepare=_INTERNET_STAND_IN,
        hosts=("httpbin.org", "www.httpbin.org", "www.google.co.uk"),
        env={"REQUESTS_CA_BUNDLE": "{home}/ssl/ca.pem", "SSL_CERT_FILE": "{home}/ssl/ca.pem"},
    ),
}

REPO_STAND_INS: dict[str, tuple[str, ...]] = {"psf/requests": ("httpbin",)}


def stand_ins(repo: str) -> list[str]:
    """The stand-ins a repository's tests need (names of ``STAND_INS``)."""
    return list(REPO_STAND_INS.get(repo, ()))


def get(name: str) -> StandIn:
    try:
        return STAND_INS[name]
    except KeyError:
        raise ValueError(f"unknown service stand-in {name!r}; known: {', '.join(sorted(STAND_INS))}") from None


def hosts(names: list[str]) -> dict[str, str]:
    """Host name -> address entries the episode needs for these stand-ins."""
    return {host: "127.0.0.1" for name in names for host in get(name).hosts}


def environment(names: list[str]) -> dict[str, str]:
    """The variables the stand-ins ``names`` give the tests (``StandIn.env``, ``{home}`` filled in)."""
    return {key: value.format(home=get(name).home()) for name in names for key, value in get(name).env.items()}


def start_lines(names: list[str]) -> list[str]:
    """Eval-script lines: start each stand-in's servers in the background, export its variables,
    wait for its ports."""
    lines: list[str] = []
    for name in names:
        service = get(name)
        home = service.home()
        python = shlex.quote(f"{home}/bin/python")
        if service.prepare:
            lines.append(service.prepare.replace("{home}", home).strip("\n"))
        for port, command in service.servers:
            lines += [f"{command.format(python=python, port=port, home=home)} > /tmp/sweworld-{name}-{port}.log "
                      "2>&1 < /dev/null &", '__sweworld_services="${__sweworld_services:-} $!"']
        lines += [f"export {key}={shlex.quote(value.format(home=home))}" for key, value in service.env.items()]
        for port, _ in service.servers:
            lines.append(f"for __i in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; "
                         "sleep 0.1; done")
        lines.append(f'echo "sweworld: stand-in {name} on ports {" ".join(str(p) for p, _ in service.servers)}"')
    return lines


def stop_lines(names: list[str]) -> list[str]:
    """Eval-script lines that stop the stand-ins started by ``start_lines``."""
    return ['[ -n "${__sweworld_services:-}" ] && kill ${__sweworld_services} 2>/dev/null; true'] if names else []


def script_lines(names: list[str]) -> ServiceLines:
    """The eval-script lines that start and stop the stand-ins ``names`` (the harness takes them)."""
    return ServiceLines(start=tuple(start_lines(names)), stop=tuple(stop_lines(names)))
