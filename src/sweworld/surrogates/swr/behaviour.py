"""Behaviour of the agent's and the gold versions of the code, without the task's environment.

The FAIL_TO_PASS tests (as the task's test patch leaves them) are searched for calls with literal
arguments to functions of the source modules either patch touches (``calls.literal_calls``). Each
call is made on three versions of its module (base, gold-patched, agent-patched), each executed
with what the standard library and the repository's own modules it imports can serve
(``served.closure``; ``probe``: a name it lacks makes the call unknown, never a difference), in
ONE sandboxed subprocess per evaluation (the caller's ``probe`` command,
``sandbox.oneshot.probe_command()``: no network, read-only filesystem; ``probe`` sets the memory limit and times each call; the whole run is killed past
``SECONDS`` + ``STARTUP``). Results are cached by (module text, served texts, call): the base and
gold versions of a task run once; an agent's version equal to either does not run, nor a call
the gold version left unknown; no subprocess starts when no literal call is found or every
result needed is cached.

``FEATURES`` (0 when undefined):

- ``behaviour_known``: some call computed in both the gold and the agent version;
- ``behaviour_equal``: share of those calls where the agent's result equals the gold's;
- ``behaviour_discriminating``: some call computed in all three versions where gold differs
  from base (the gold patch changes what it returns or raises);
- ``behaviour_fixed``: share of the discriminating calls where agent == gold (evidence of a fix);
- ``behaviour_kept``: share of them where agent == base (evidence of none);
- ``behaviour_calls``: log(1 + calls found).
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sweworld.core.types import Task
from sweworld.surrogates.swr.calls import Call, defined, literal_calls
from sweworld.surrogates.swr.patched import FileSource, Patched
from sweworld.surrogates.swr.served import closure, package_of
from sweworld.surrogates.swr.syntax import module
from sweworld.surrogates.swt.testsource import is_test_file

FEATURES = ("behaviour_known", "behaviour_equal", "behaviour_discriminating", "behaviour_fixed", "behaviour_kept",
            "behaviour_calls")
SECONDS = 2.0
PER_CALL = 0.5
MEMORY = 512 * 1024**2
STARTUP = 1.0
"""Seconds of all calls; of one call; the address-space limit; the margin of the process's start."""
VERSIONS = ("base", "gold", "agent")
_PROBE = Path(__file__).with_name("probe.py")
_RESULTS: dict[tuple[str, Call], str | None] = {}
_SERVED: dict[tuple, dict[str, tuple[str, str]]] = {}
_BROKEN: list[str] = []
"""Why the sandbox cannot start in this process (empty: it can); every call is then unknown."""
Result = str | None
stats = {"runs": 0, "calls_run": 0, "seconds": 0.0}
"""Subprocesses started, calls made in them, and the seconds ``behaviour`` took (for the
benchmark's cost figures)."""


def clear() -> None:
    """Forget the cached results and the counts."""
    _RESULTS.clear()
    _SERVED.clear()
    stats.update(runs=0, calls_run=0, seconds=0.0)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def versions(gold: Patched, agent: Patched, read: FileSource) -> dict[str, dict[str, str]]:
    """Source path -> {version: text} of the Python modules outside the tests either patch touches
    (a version a patch leaves alone is the base; one that deletes the module has none)."""
    out: dict[str, dict[str, str]] = {}
    for path in dict.fromkeys([*gold.paths, *agent.paths]):
        if not path.endswith(".py") or is_test_file(path):
            continue
        base = gold.base[path] if path in gold.base else agent.base.get(path, read(path))
        texts = {"base": base,
                 "gold": gold.after.get(path) if path in gold.after else base,
                 "agent": agent.after.get(path) if path in agent.after else base}
        out[path] = {v: t for v, t in texts.items() if t is not None}
    return out


def run(modules: Mapping[str, tuple[str, str, str, str | None]], served: Mapping[str, Mapping[str, str]],
        calls: list[tuple[str, Call]], probe: Sequence[str]) -> list[Result]:
    """Results of ``calls`` ((module key, call)) on ``modules`` (key -> (dotted name, package, text,
    id of the set of ``served`` modules it imports: id -> {dotted name: text})), in one ``probe``
    process (``probe``: the isolated Python it runs under, ``sandbox.oneshot.probe_command()``); all
    unknown when the sandbox cannot start."""
    request = {"limits": {"memory": MEMORY, "seconds": SECONDS, "per_call": PER_CALL},
               "modules": {k: {"name": n, "package": pk, "text": t, "served": sid} for k, (n, pk, t, sid) in modules.items()},
               "served": served,
               "calls": [[i, key, c.name, c.args, c.kwargs, list(c.setup)] for i, (key, c) in enumerate(calls)]}
    if _BROKEN:
        return [None] * len(calls)
    argv = [*probe, "-I", "-S", "-c", _PROBE.read_text(encoding="utf-8")]
    stats["runs"] += 1
    stats["calls_run"] += len(calls)
    try:
        proc = subprocess.run(argv, input=json.dumps(request), capture_output=True, text=True,
                              timeout=SECONDS + STARTUP)
        out = proc.stdout
        if proc.returncode and not out and proc.stderr.startswith("bwrap:"):
            _BROKEN.append(proc.stderr[:500])  # bwrap cannot start here: no probe for this process
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
    except OSError:
        out = ""
    results: list[Result] = [None] * len(calls)
    for line in out.splitlines():
        if line.startswith("@@probe "):
            try:
                index, value = json.loads(line[len("@@probe "):])
                results[index] = value if isinstance(value, str) else None
            except (ValueError, TypeError, IndexError):
                continue
    return results


def _calls(task: Task, texts: Mapping[str, Mapping[str, str]], read: FileSource, tests: Patched) -> list[Call]:
    modules = {p: frozenset().union(*(defined(module(t)) for t in vs.values())) for p, vs in texts.items()}
    by_file: dict[str, list[str]] = {}
    for test in task.FAIL_TO_PASS:
        by_file.setdefault(test.split("::", 1)[0], []).append(test)
    out: list[Call] = []
    for path, ids in by_file.items():
        text = tests.after.get(path) if path in tests.after else read(path)
        if text and path.endswith(".py"):
            out += literal_calls(text, ids, modules)
    return out


def _served(task: Task, texts: Mapping[str, Mapping[str, str]], gold: Patched, agent: Patched,
            read: FileSource) -> dict[str, dict[str, str]]:
    """Version -> {dotted name: text} of the repository's modules the probed ones import: the
    closure of the modules the gold patch touches, computed once per task; for the base and gold
    versions their base texts, for the agent's version the agent's where its patch touches one."""
    key = (task.instance_id, task.base_commit, hash(task.patch))
    if key not in _SERVED:
        if len(_SERVED) > 256:
            _SERVED.clear()
        mine = {p: [vs[v] for v in ("base", "gold") if v in vs] for p, vs in texts.items() if p in gold.after}
        _SERVED[key] = {d: (p, (read(p) or "") if keep else "")
                        for d, (p, keep) in closure(mine, read, set(gold.paths)).items()}
    base = {d: t for d, (_, t) in _SERVED[key].items()}
    touched = {d: agent.after[p] for d, (p, _) in _SERVED[key].items() if p in agent.after and base[d]}
    return {"base": base, "gold": base, "agent": {d: t for d, t in {**base, **touched}.items() if t is not None}}


def results(task: Task, gold: Patched, agent: Patched, read: FileSource, tests: Patched,
            probe: Sequence[str]) -> list[dict[str, Result]]:
    """Per literal call of the FAIL_TO_PASS tests, {version: result} (see the module docstring)."""
    texts = versions(gold, agent, read)
    calls = _calls(task, texts, read, tests) if texts else []
    if not calls:
        return []
    served = _served(task, texts, gold, agent, read)
    sids = {v: _digest(json.dumps(sorted((d, _digest(t)) for d, t in served[v].items()))) for v in VERSIONS}
    keys = {(p, v): f"{_digest(t)}:{sids[v]}" for p, vs in texts.items() for v, t in vs.items()}
    todo: dict[tuple[str, Call], None] = {}
    for call in calls:
        gold_key = keys.get((call.path, "gold"))
        for v in VERSIONS:
            key = keys.get((call.path, v))
            if key is None or (key, call) in _RESULTS:
                continue
            if v == "agent" and gold_key is not None and _RESULTS.get((gold_key, call), "") is None:
                continue  # unknown on the gold version (a further patch of the task): nothing to compare
            todo[(key, call)] = None
    if todo:
        pending = list(todo)
        needed = {key for key, _ in pending}
        modules = {}
        for (p, v), key in keys.items():
            if key in needed:
                name, package, _ = package_of(p, read)
                modules[key] = (name, package, texts[p][v], sids[v])
        sets = {sids[v]: served[v] for v in VERSIONS if sids[v] in {m[3] for m in modules.values()}}
        if len(_RESULTS) + len(pending) > 8192:
            _RESULTS.clear()
        _RESULTS.update(zip(pending, run(modules, sets, pending, probe), strict=True))
    return [{v: _RESULTS.get((keys[(c.path, v)], c)) if (c.path, v) in keys else None for v in VERSIONS} for c in calls]


def behaviour(task: Task, gold: Patched, agent: Patched, read: FileSource, tests: Patched,
              probe: Sequence[str]) -> dict[str, float]:
    """``FEATURES`` of the agent's patch (see the module docstring)."""
    start = time.perf_counter()
    try:
        table = results(task, gold, agent, read, tests, probe)
    finally:
        stats["seconds"] += time.perf_counter() - start
    known = [r for r in table if r["gold"] is not None and r["agent"] is not None]
    telling = [r for r in known if r["base"] is not None and r["base"] != r["gold"]]
    share = lambda rows, test: sum(map(test, rows)) / len(rows) if rows else 0.0  # noqa: E731
    return {"behaviour_known": float(bool(known)),
            "behaviour_equal": share(known, lambda r: r["agent"] == r["gold"]),
            "behaviour_discriminating": float(bool(telling)),
            "behaviour_fixed": share(telling, lambda r: r["agent"] == r["gold"]),
            "behaviour_kept": share(telling, lambda r: r["agent"] == r["base"]),
            "behaviour_calls": math.log1p(len(table))}
