"""The program ``behaviour`` runs in its sandbox: versions of modules executed with the standard
library only, their functions called on literal arguments. Standard library only (it runs as
``python -I -S -c``, nothing of sweworld importable).

Limits: the address space (``RLIMIT_AS``), CPU seconds (``RLIMIT_CPU``: a backstop), no core files;
each statement and call runs under a timer (``setitimer``) within the budget of all calls.

Input (stdin, JSON): ``{"limits": {"memory": bytes, "seconds": s, "per_call": s}, "modules": {key:
{"name": dotted, "text": source}}, "calls": [[index, key, "name" or "Class.method", args, kwargs,
setup]]}`` (``args``/``kwargs``: the source of a tuple and of a dict, evaluated, for each call
afresh, among the builtins and what the import statements ``setup`` bind). A module's namespace
keeps what the standard library can serve: its imports of standard modules
(``sys.stdlib_module_names``; relative and other imports skipped), its top-level ``def``s and
classes, its plain assignments, and ``if``/``try`` blocks of those, each statement executed alone
(one that fails is skipped), annotations never evaluated.

Output (stdout): a line ``@@probe [index, result]`` per call, written as each is done: ``result``
is ``"=" + repr((value, args, kwargs))`` (addresses blanked, sets sorted: the arguments too, after
the call, which shows a mutation), ``"!" + the exception's type name``, or null (unknown: the name
is missing from the namespace, a name the call needs was skipped (``NameError``, ``ImportError``),
the call ran out of its time or of memory, or the budget of all calls was spent).
"""

import ast
import io
import json
import re
import resource
import signal
import sys
import time

MARK = "@@probe "
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_UNKNOWN = (NameError, ImportError, MemoryError, RecursionError)


class Timeout(BaseException):
    """The call's time is up (a BaseException: ``except Exception`` in the callee cannot keep it)."""


def _alarm(signum, frame):
    raise Timeout


def canonical(value, depth=0):
    """``repr`` with sets in a fixed order (their order follows the process's hash seed)."""
    if depth > 20:
        return "..."
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(canonical(v, depth + 1) for v in value))
        return f"{type(value).__name__}({{{inner}}})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(canonical(v, depth + 1) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{canonical(k, depth + 1)}: {canonical(v, depth + 1)}" for k, v in value.items()) + "}"
    return _ADDRESS.sub(" at 0x", repr(value))


class Served:
    """A finder and loader of the repository's own modules that ``modules`` ships (``served``:
    set id -> {dotted name: text}), each executed as a probed module is; ``use(sid)`` makes one set
    current, swapping ``sys.modules`` so that versions never share an imported module."""

    def __init__(self, served):
        self.served = served
        self.names = {name for texts in served.values() for name in texts}
        self.tops = {name.split(".", 1)[0] for name in self.names}
        self.loaded = {}
        self.current = None
        self.deadline = 0.0

    def use(self, sid):
        if sid == self.current:
            return
        if self.current is not None:
            self.loaded[self.current] = {n: sys.modules[n] for n in self.names if n in sys.modules}
        for name in self.names:
            sys.modules.pop(name, None)
        sys.modules.update(self.loaded.get(sid, {}))
        self.current = sid

    def find_spec(self, name, path=None, target=None):
        if name not in self.served.get(self.current, {}):
            return None
        import importlib.util
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        fill(module.__dict__, self.served[self.current][module.__name__], self.deadline, self.tops)


def _kept(stmt, tops):
    """``stmt`` filtered to what can be served (None: nothing of it): imports of standard modules
    and of served ones (``tops``: their top packages; relative imports), definitions, plain
    assignments, and ``if``/``try`` blocks of those."""
    keep = lambda body: [k for k in (_kept(b, tops) for b in body) if k is not None]  # noqa: E731
    if isinstance(stmt, ast.Import):
        ok = all(a.name.split(".", 1)[0] in sys.stdlib_module_names or a.name.split(".", 1)[0] in tops for a in stmt.names)
        return stmt if ok else None
    if isinstance(stmt, ast.ImportFrom):
        top = (stmt.module or "").split(".", 1)[0]
        return stmt if stmt.level or top in sys.stdlib_module_names or top in tops else None
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
        return stmt
    if isinstance(stmt, (ast.If, ast.Try)):
        stmt.body = keep(stmt.body)
        if not stmt.body:
            return None
        stmt.orelse = keep(stmt.orelse)
        if isinstance(stmt, ast.Try):
            stmt.finalbody = keep(stmt.finalbody)
            for handler in stmt.handlers:
                handler.body = keep(handler.body) or [ast.Pass()]
        return stmt
    return None


class Limit:
    """The timer of the outermost limited block (a nested one, an import inside a call, runs
    under the outer timer)."""

    armed = False

    def __init__(self, seconds):
        self.seconds, self.outer = seconds, False

    def __enter__(self):
        if not Limit.armed:
            Limit.armed = self.outer = True
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001))

    def __exit__(self, *exc):
        if self.outer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            Limit.armed = False


def fill(ns, text, deadline, tops):
    """Execute what can be served of ``text`` in ``ns`` (see the module docstring)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    flags = __import__("__future__").annotations.compiler_flag
    name = ns.get("__name__", "module")
    for stmt in tree.body:
        stmt = _kept(stmt, tops)
        if stmt is None or time.monotonic() > deadline:
            continue
        limit = Limit(deadline - time.monotonic())
        try:
            code = compile(ast.fix_missing_locations(ast.Module(body=[stmt], type_ignores=[])), f"<{name}>", "exec",
                           flags=flags, dont_inherit=True)
            with limit:
                exec(code, ns)
        except Timeout:
            if not limit.outer:
                raise  # an import inside a call ran out of the call's time
        except Exception:
            continue


def namespace(name, package, text, deadline, tops):
    """The namespace of a probed module."""
    ns = {"__name__": name, "__package__": package, "__builtins__": __builtins__}
    fill(ns, text, deadline, tops)
    return ns


def call(ns, name, args, kwargs, setup, seconds):
    """One call's result (see the module docstring)."""
    target = ns.get(name.split(".", 1)[0])
    if "." in name:
        target = getattr(target, name.split(".", 1)[1], None)
    if not callable(target):
        return None
    with Limit(seconds):
        try:
            scope = {"__builtins__": __builtins__}
            for line in setup:
                exec(line, scope)
            args, kwargs = list(eval(args, scope)), eval(kwargs, scope)
        except (Exception, Timeout):
            return None
        try:
            value = target(*args, **kwargs)
        except Timeout:
            return None
        except _UNKNOWN:
            return None
        except BaseException as exc:  # the behaviour IS the exception
            return "!" + type(exc).__name__
        try:
            return ("=" + canonical((value, args, kwargs)))[:4000]
        except (Exception, Timeout):
            return None


def main():
    request = json.loads(sys.stdin.read())
    limits = request["limits"]
    if limits.get("memory"):
        resource.setrlimit(resource.RLIMIT_AS, (limits["memory"], limits["memory"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["seconds"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    out = sys.stdout
    sys.stdout = sys.stderr = io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    deadline = time.monotonic() + limits["seconds"]
    served = Served(request.get("served", {}))
    served.deadline = deadline
    sys.meta_path.insert(0, served)
    spaces = {}
    for index, key, name, args, kwargs, setup in request["calls"]:
        result = None
        module = request["modules"][key]
        if deadline - time.monotonic() > 0:
            try:
                served.use(module.get("served"))
                if key not in spaces:
                    spaces[key] = namespace(module["name"], module.get("package", ""), module["text"], deadline,
                                            served.tops)
                result = call(spaces[key], name, args, kwargs, setup,
                              min(limits["per_call"], max(deadline - time.monotonic(), 0.001)))
            except (Exception, Timeout):
                result = None
        sys.stdout.seek(0)
        sys.stdout.truncate()
        out.write(MARK + json.dumps([index, result]) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
