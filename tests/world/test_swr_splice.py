"""A module version parsed by splicing (only the statements whose lines changed) is what parsing the
whole text gives: whether it parses, its functions, their text and their code."""

from __future__ import annotations

import importlib
import inspect
import random

import pytest

from sweworld.surrogates.swr.splice import spliced
from sweworld.surrogates.swr.syntax import Module, module, same

SOURCES = ("argparse", "configparser", "dataclasses", "difflib", "inspect", "pathlib", "typing", "unittest.case")


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    new, k = list(lines), rng.randrange(len(lines))
    indent = " " * (len(lines[k]) - len(lines[k].lstrip()))
    match rng.choice(("comment", "rename", "insert", "delete", "method", "unbalanced", "dedent", "function",
                      "two places")):
        case "comment":
            new[k] += "  # note"
        case "rename":
            new[k] = new[k].replace("self", "me").replace("(", "( ")
        case "insert":
            new.insert(k, indent + "x_ = 1")
        case "delete":
            del new[k:k + rng.randrange(1, 8)]
        case "method":
            new.insert(k, "    def added_(self):\n        return 1\n")
        case "unbalanced":
            new[k] += " ("
        case "dedent":
            new[k] = new[k].lstrip()
        case "function":
            new.insert(k, "\ndef added_():\n    return 2\n")
        case "two places":
            new[k] += "  # one"
            new[-1 - rng.randrange(len(lines) // 2)] += "  # two"
    return new


def _assert_same(whole: Module, parts: Module, what: str) -> None:
    assert parts.ok == whole.ok, what
    if whole.ok:
        assert parts.nodes.keys() == whole.nodes.keys(), what
        for name in whole.nodes:
            assert (parts.source(name), parts.code(name)) == (whole.source(name), whole.code(name)), f"{what}: {name}"


@pytest.mark.parametrize("name", SOURCES)
def test_a_spliced_version_is_the_whole_parse(name):
    text = inspect.getsource(importlib.import_module(name))
    base, lines, rng = module(text), text.split("\n"), random.Random(name)
    for trial in range(25):
        new = "\n".join(_edit(lines, rng))
        _assert_same(Module(new), spliced(base, new), f"{name}, edit {trial}")


def test_a_method_changed_in_a_big_class_shares_every_other_function_with_the_base():
    text = inspect.getsource(importlib.import_module("argparse"))
    base = module(text)
    old = "    def parse_known_args(self, args=None, namespace=None):\n"
    new = spliced(base, text.replace(old, old + "        args = args or None\n"))
    changed = {n for n in base.nodes if not same(base, new, n)}
    assert changed == {"ArgumentParser.parse_known_args"}
    kept = [n for n in base.nodes if n != "ArgumentParser.parse_known_args" and n != "<module>"]
    assert all(new.nodes[n][0] is base.nodes[n][0] for n in kept)  # the base's own nodes: parsed once
    _assert_same(Module(new.text), new, "argparse")


def test_a_broken_version_and_a_deleted_class_body_say_what_the_whole_parse_says():
    text = "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n"
    base = module(text)
    for new in (text.replace("return 1", "return (1"), text.replace("    def f(self):\n        return 1\n", ""),
                text.replace("return 2", "return 3"), text + "\nclass B(A):\n    pass\n"):
        _assert_same(Module(new), spliced(base, new), new)
