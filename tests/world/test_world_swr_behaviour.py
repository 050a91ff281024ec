"""The embedded SWR's behaviour features: literal calls of the FAIL_TO_PASS tests made on the base,
gold and agent versions of a module, with the standard library only, in a sandbox."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from realtasks import unified
from sweworld.core.errors import WorldError
from sweworld.core.types import Task
from sweworld.sandbox.oneshot import probe_command
from sweworld.surrogates.swr import FEATURES, SWRClassifier, behaviour, features, shipped_path
from sweworld.surrogates.swr.calls import Call, literal_calls
from sweworld.surrogates.swr.patched import apply_patch_text
from sweworld.surrogates.swr.predict import decide
from sweworld.surrogates.swr.probe import canonical
from sweworld.surrogates.swr.served import closure, package_of

PATH, TEST = "mini/core.py", "tests/test_core.py"
BASE = '''import re
from collections import OrderedDict

import numpy as np
from .helpers import shout
from .util import PREFIX

SEP = "-"


def slug(text, sep=SEP):
    return re.sub(r"\\W+", sep, text).strip(sep)


def mean(values):
    return float(np.mean(values))


def spin(n):
    while True:
        n += 1


class Word:
    @staticmethod
    def count(text):
        return len(text.split(" "))


def kind(cls):
    return cls.__module__


def label(x):
    from mini.util import wrap
    return wrap(x) + PREFIX
'''
GOLD = BASE.replace("text).strip(sep)", "text).strip(sep).lower()").replace('split(" ")', "split()").replace(
    "import re\n", "import re\nfrom struct import Struct\n").replace(
    "    return cls.__module__", "    if cls is Struct:\n        return 'struct'\n    return cls.__module__").replace(
    "wrap(x) + PREFIX", "wrap(x.strip()) + PREFIX")
EQUIVALENT = BASE.replace("    return re.sub(", "    text = text.lower()\n    return re.sub(").replace(
    'split(" ")', 'split(None)').replace("    return cls.__module__", "    return cls.__module__.strip('_')")
WRONG = BASE.replace("text).strip(sep)", "text).strip(sep).upper()")
ELSEWHERE = BASE.replace("n += 1", "n += 2")
TESTS = '''from struct import Struct

import pytest

from mini.core import mean, slug, spin
from mini import core

WORDS = ["one  two", "three"]


def helper(x):
    return x


@pytest.mark.parametrize("text, expected", [("Hello World", "hello-world"), pytest.param("A  b", "a-b", id="two")])
def test_slug(text, expected):
    assert slug(text) == expected
    assert slug(text, sep="_") == expected.replace("-", "_")


@pytest.mark.parametrize("text", WORDS)
def test_count(text):
    assert core.Word.count(text) == len(text.split())


def test_mean():
    assert mean([1, 2, 3]) == 2.0


def test_spin():
    spin(3)


def test_kind():
    assert core.kind(Struct) == "struct"


def test_label():
    assert core.label(" a ") == "[a]!"


def test_other():
    value = helper(3)
    assert slug(str(value)) == "3"
'''
UTIL = 'import numpy\n\nPREFIX = "!"\n\n\ndef wrap(s):\n    return "[" + s + "]"\n'
FILES = {PATH: BASE, "mini/__init__.py": "", "mini/util.py": UTIL}


def task(*tests: str) -> Task:
    return Task(instance_id="local__mini-1", repo="local/mini", base_commit="0" * 40, patch=unified(PATH, BASE, GOLD),
                test_patch=unified(TEST, "", TESTS), FAIL_TO_PASS=[f"{TEST}::{t}" for t in tests])


def of(text: str, *tests: str) -> dict[str, float]:
    return features(task(*tests), unified(PATH, BASE, text), FILES.get, probe=probe_command())


def test_the_literal_calls_are_found_through_imports_parametrize_and_constants():
    found = literal_calls(TESTS, [f"{TEST}::{t}" for t in ("test_slug[two]", "test_count", "test_mean", "test_kind",
                                                          "test_other")],
                          {PATH: frozenset({"slug", "mean", "spin", "Word.count", "kind"})})
    assert len(found) == len(set(found))
    assert set(found) == {Call(PATH, "slug", "('Hello World',)", "{}"), Call(PATH, "slug", "('Hello World',)", "{'sep': '_'}"),
                     Call(PATH, "slug", "('A  b',)", "{}"), Call(PATH, "slug", "('A  b',)", "{'sep': '_'}"),
                     Call(PATH, "Word.count", "('one  two',)", "{}"), Call(PATH, "Word.count", "('three',)", "{}"),
                     Call(PATH, "mean", "([1, 2, 3],)", "{}"),
                     Call(PATH, "kind", "(Struct,)", "{}", ("from struct import Struct",))}  # slug(str(value)): not a literal


def test_results_are_canonical():
    assert canonical({"b", "a"}) == canonical({"a", "b"}) == "set({'a', 'b'})"
    assert canonical((object(), [frozenset({2, 1})])).startswith("(<object object at 0x>, [frozenset({1, 2})])")


@pytest.mark.bwrap
def test_an_equivalent_fix_behaves_as_the_gold_a_wrong_one_does_not():
    equivalent, elsewhere = (of(t, "test_slug", "test_count", "test_kind") for t in (EQUIVALENT, ELSEWHERE))
    wrong = of(WRONG, "test_slug")
    assert set(FEATURES) >= set(behaviour.FEATURES)
    assert EQUIVALENT != GOLD and equivalent["modules_equal"] == 0
    assert (equivalent["behaviour_known"], equivalent["behaviour_discriminating"]) == (1, 1)
    assert (equivalent["behaviour_equal"], equivalent["behaviour_fixed"], equivalent["behaviour_kept"]) == (1, 1, 0)
    assert (wrong["behaviour_known"], wrong["behaviour_equal"], wrong["behaviour_fixed"], wrong["behaviour_kept"]) == (1, 0, 0, 0)
    assert (elsewhere["behaviour_fixed"], elsewhere["behaviour_kept"]) == (0, 1)


@pytest.mark.bwrap
def test_the_repositorys_own_modules_are_served_to_imports():
    table = behaviour.results(task("test_label"), apply_patch_text(task().patch, FILES.get),
                              apply_patch_text(unified(PATH, BASE, EQUIVALENT), FILES.get), FILES.get,
                              apply_patch_text(task().test_patch, FILES.get), probe_command())
    assert table == [{"base": "=('[ a ]!', [' a '], {})", "gold": "=('[a]!', [' a '], {})",
                      "agent": "=('[ a ]!', [' a '], {})"}]


@pytest.mark.bwrap
def test_no_literal_call_is_not_known_and_starts_nothing():
    runs = behaviour.stats["runs"]
    values = of(EQUIVALENT, "test_other")
    assert values["behaviour_known"] == values["behaviour_calls"] == 0
    assert behaviour.stats["runs"] == runs


@pytest.mark.bwrap
def test_a_missing_import_and_an_endless_loop_are_unknown_not_differences():
    start = time.perf_counter()
    values = of(BASE.replace("def spin(n):", "def spin(n):\n    n -= 1"), "test_mean", "test_spin")
    assert time.perf_counter() - start < behaviour.SECONDS + behaviour.STARTUP
    assert values["behaviour_calls"] > 0  # found, then unknown: numpy is no standard module, spin never returns
    assert values["behaviour_known"] == values["behaviour_equal"] == values["behaviour_discriminating"] == 0


@pytest.mark.bwrap
def test_the_sandbox_has_no_network_and_no_writable_filesystem():
    probe = "import socket, os\n\ndef net(x):\n    socket.create_connection(('1.1.1.1', 53), timeout=0.2)\n\n" \
            "def write(x):\n    open('/' + x, 'w')\n\ndef fine(x):\n    return x * 2\n"
    c = lambda name: Call("p.py", name, "('x',)", "{}")  # noqa: E731
    assert behaviour.run({"k": ("p", "", probe, None)}, {}, [("k", c("net")), ("k", c("write")), ("k", c("fine"))],
                         probe_command()) == [
        "!OSError", "!OSError", "=('xx', ['x'], {})"]


@pytest.mark.bwrap
def test_a_model_that_does_not_weigh_them_starts_no_probe():
    model, patch = SWRClassifier.load(shipped_path()), unified(PATH, BASE, WRONG.replace("upper", "title"))
    runs = behaviour.stats["runs"]
    assert decide(model, task("test_slug"), patch, FILES.get)[1]["behaviour_known"] == 0
    assert behaviour.stats["runs"] == runs  # the shipped model weighs none of them
    assert features(task("test_slug"), patch, FILES.get, probe=probe_command())["behaviour_known"] == 1
    assert behaviour.stats["runs"] == runs + 1


def test_a_model_that_weighs_them_without_a_probe_is_one_clear_error():
    weighing = SimpleNamespace(features=("tokens_jaccard", "behaviour_fixed"))
    with pytest.raises(WorldError, match="weighs the behaviour features") as caught:
        decide(weighing, task("test_slug"), unified(PATH, BASE, WRONG), FILES.get)
    assert "probe_command" in caught.value.hint


def test_the_served_modules_are_the_imported_ones_of_the_repository():
    files = {"src/pkg/__init__.py": "from .big import *\n", "src/pkg/sub/__init__.py": "", "src/pkg/big.py": "X = 1\n",
             "src/pkg/sub/mod.py": "import json\nimport numpy\nfrom . import sib\nfrom ..big import X\n\n\n"
                                   "def f():\n    from pkg.sub.lazy import g\n",
             "src/pkg/sub/sib.py": "", "src/pkg/sub/lazy.py": "def g():\n    pass\n"}
    assert package_of("src/pkg/sub/mod.py", files.get) == ("pkg.sub.mod", "pkg.sub", "src")
    assert package_of("src/pkg/__init__.py", files.get) == ("pkg", "pkg", "src")
    served = closure({"src/pkg/sub/mod.py": [files["src/pkg/sub/mod.py"]]}, files.get, {"src/pkg/sub/mod.py"})
    assert served == {"pkg": ("src/pkg/__init__.py", False), "pkg.big": ("src/pkg/big.py", True),
                      "pkg.sub": ("src/pkg/sub/__init__.py", True), "pkg.sub.sib": ("src/pkg/sub/sib.py", True),
                      "pkg.sub.lazy": ("src/pkg/sub/lazy.py", True)}  # pkg only above pkg.big: served empty
