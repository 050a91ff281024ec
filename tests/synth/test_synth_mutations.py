"""Procedural bug injection on real modules (the stdlib's textwrap/statistics) and exact snippets."""

from __future__ import annotations

import ast
import difflib
import functools
import subprocess
import sysconfig
from pathlib import Path

import pytest

from sweworld.synth import KINDS, Mutation, combine, fix_patch, mutations_for_file, sample_mutations
from sweworld.synth.candidates import is_test_path

STDLIB = Path(sysconfig.get_paths()["stdlib"])
REAL = {
    f"pkg/{name}": (STDLIB / name).read_text(encoding="utf-8") for name in ("textwrap.py", "statistics.py")
}
PATH = "pkg/mod.py"


@functools.cache
def real_mutations() -> tuple[Mutation, ...]:
    """Every mutation of textwrap, and a sample of 20 per kind of statistics (fast enough to check)."""
    statistics = {"pkg/statistics.py": REAL["pkg/statistics.py"]}
    every = mutations_for_file("pkg/textwrap.py", REAL["pkg/textwrap.py"])
    return (*every, *sample_mutations(statistics, seed=0, max_per_kind=20))


def of_kind(kind: str, text: str, path: str = PATH) -> list[Mutation]:
    return list(KINDS[kind](path, text))


def changed(kind: str, text: str) -> list[str]:
    """The mutated texts of ``kind`` on ``text``, each checked to parse and differ."""
    out = []
    for mutation in of_kind(kind, text):
        ast.parse(mutation.mutated)
        assert mutation.mutated != text and mutation.original == text and mutation.kind == kind
        out.append(mutation.mutated)
    return out


def hunks(a: str, b: str) -> list[str]:
    return [line for line in difflib.unified_diff(a.splitlines(True), b.splitlines(True)) if line[:2] == "@@"]


@pytest.mark.parametrize(
    ("expr", "flipped"),
    [
        ("a < b", "a >= b"), ("a >= b", "a < b"), ("a > b", "a <= b"), ("a <= b", "a > b"),
        ("a == b", "a != b"), ("a != b", "a == b"), ("a is b", "a is not b"),
        ("a is not b", "a is b"), ("a in b", "a not in b"), ("a not in b", "a in b"),
        ("(a)<(b)  # a < b", "(a)>=(b)  # a < b"),
    ],
)  # fmt: skip
def test_flip_comparison_exact(expr: str, flipped: str) -> None:
    src = "def f(a, b):\n    x = {}\n    return x\n"
    assert changed("flip_comparison", src.format(expr)) == [src.format(flipped)]


def test_flip_comparison_chain_gives_one_per_operator() -> None:
    src = "def f(a, b, c):\n    x = a < b <= c\n    return x\n"
    assert changed("flip_comparison", src) == [
        src.replace("a < b", "a >= b"),
        src.replace("b <= c", "b > c"),
    ]


def test_flip_boolop_exact() -> None:
    src = "def f(a, b, c):\n    x = a and (b or c)\n    return x\n"
    assert changed("flip_boolop", src) == [
        src.replace("a and (", "a or ("),
        src.replace("b or c", "b and c"),
    ]


def test_off_by_one_range_slice_and_constant() -> None:
    src = "def f(s, n):\n    for i in range(1, len(s) - 1):\n        n += 5\n    return s[:-1] + s[n:]\n"
    assert changed("off_by_one", src) == [
        src.replace("range(1,", "range(2,"),
        src.replace("len(s) - 1)", "len(s) - 2)"),
        src.replace("n += 5", "n += 6"),
        src.replace("s[:-1]", "s[:-2]"),
        src.replace("s[n:]", "s[n + 1:]"),
    ]
    assert changed("off_by_one", "def f(n):\n    m = 2\n    return range(n + 1)\n")[1].endswith("range(n)\n")
    assert (
        "range((a or b) - 1)"
        in changed("off_by_one", "def f(a, b):\n    a = b\n    return range(a or b)\n")[0]
    )


def test_invert_condition_exact() -> None:
    src = "def f(a, b):\n    if a > b:\n        return a\n    if a and b:\n        return b\n    if not a:\n        return 0\n"
    assert changed("invert_condition", src) == [
        src.replace("if a > b", "if not a > b"),
        src.replace("if a and b", "if not (a and b)"),
        src.replace("if not a", "if a"),
    ]


def test_swap_if_else_exact_and_not_elif() -> None:
    src = (
        "def f(a):\n    if a:\n        x = 1\n        y = 2\n    else:\n        x = 3\n    return x\n"
        "\n\ndef g(a):\n    if a:\n        x = 1\n    elif a is None:\n        x = 2\n    return x\n"
    )
    swapped = src.replace(
        "        x = 1\n        y = 2\n    else:\n        x = 3\n",
        "        x = 3\n    else:\n        x = 1\n        y = 2\n",
        1,
    )
    assert changed("swap_if_else", src) == [swapped]


def test_remove_statement_keeps_the_final_return() -> None:
    src = "def f(a):\n    b = a * 2\n    print(b)  # note\n    return b\n"
    assert changed("remove_statement", src) == [
        "def f(a):\n    print(b)  # note\n    return b\n",
        "def f(a):\n    b = a * 2\n    return b\n",
    ]


def test_remove_guard_exact() -> None:
    src = 'def f(x):\n    if x is None:\n        raise ValueError("x")\n    return x * 2\n'
    assert changed("remove_guard", src) == ["def f(x):\n    return x * 2\n"]


def test_remove_return_only_with_another_return() -> None:
    src = "def f(a):\n    if a:\n        return a + 1\n    return -a\n"
    assert changed("remove_return", src) == [
        src.replace("return a + 1", "return None"),
        src.replace("return -a", "return None"),
    ]
    assert changed("remove_return", "def f(a):\n    b = a\n    return b\n") == []


def test_change_arith_op_exact_and_type_safe() -> None:
    src = "def f(a, b):\n    a += 1\n    c = a * b\n    return c - b\n"
    assert changed("change_arith_op", src) == [
        src.replace("a += 1", "a -= 1"),
        src.replace("a * b", "a // b"),
        src.replace("c - b", "c + b"),
    ]
    strings = 'def f(a, s):\n    t = "x" + s\n    u = "%s" % a\n    return t * 3 + [u] * 2\n'
    assert changed("change_arith_op", strings) == [  # `t` may be a string: only literals are known
        strings.replace("t * 3", "t // 3"),
        strings.replace("t * 3 +", "t * 3 -"),
    ]


def test_swap_call_args_exact() -> None:
    src = "def f(a, b):\n    g(a, b, c=1)\n    return max(a, b)\n"
    assert changed("swap_call_args", src) == [src.replace("g(a, b,", "g(b, a,")]


def test_replace_literal_exact() -> None:
    src = 'def f(a):\n    a.flag = True\n    a.count = 0\n    return a.get("name")\n'
    assert changed("replace_literal", src) == [
        src.replace("True", "False"),
        src.replace("= 0", "= 1"),
        src.replace('"name"', "'Name'"),
    ]


def test_remove_loop_control_exact() -> None:
    src = "def f(xs):\n    for x in xs:\n        if x:\n            break\n        print(x)\n        continue\n    return xs\n"
    assert changed("remove_loop_control", src) == [
        src.replace("            break", "            pass"),
        src.replace("        continue\n", ""),
    ]


def test_every_kind_on_real_modules_parses_differs_and_is_one_small_hunk() -> None:
    mutations = real_mutations()
    assert {m.kind for m in mutations} == set(KINDS) and len(KINDS) >= 10
    for mutation in mutations:
        text = REAL[mutation.path]
        ast.parse(mutation.mutated)
        assert mutation.mutated != text and mutation.original == text
        assert len(hunks(text, mutation.mutated)) == 1, mutation.description
        diff = difflib.unified_diff(text.splitlines(), mutation.mutated.splitlines(), n=0)
        assert sum(line[:1] in "+-" for line in list(diff)[2:]) <= 24


def _functions(tree: ast.AST, prefix: str = "") -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found = {}
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[prefix + node.name] = node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.update(_functions(node, f"{prefix}{node.name}."))
        elif isinstance(node, ast.stmt):
            found.update(_functions(node, prefix))
    return found


def _untouchable(tree: ast.AST) -> list[str | None]:
    """Every docstring and every annotation (variables, arguments, returns) of a module."""
    out: list[str | None] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(ast.get_docstring(node, clean=False))
        for field in ("annotation", "returns"):
            if getattr(node, field, None) is not None:
                out.append(ast.dump(getattr(node, field)))
    return out


def test_only_function_bodies_change_never_docstrings_or_annotations() -> None:
    trees = {path: ast.parse(text) for path, text in REAL.items()}
    functions = {path: _functions(tree) for path, tree in trees.items()}
    fixed = {path: _untouchable(tree) for path, tree in trees.items()}
    assert any(isinstance(n, ast.arg) and n.annotation for n in ast.walk(trees["pkg/statistics.py"]))
    for mutation in real_mutations():
        func = functions[mutation.path][mutation.function]
        body = func.body[1:] if ast.get_docstring(func) is not None else func.body
        first, last = mutation.lines
        assert body[0].lineno <= first <= last <= (func.end_lineno or 0), mutation.description
        assert _untouchable(ast.parse(mutation.mutated)) == fixed[mutation.path]


def test_module_level_code_annotations_and_small_functions_are_left_alone() -> None:
    src = (
        '"""Doc."""\n\nLIMIT = 10\n__all__ = ["f"]\nif LIMIT > 3:\n    LIMIT = LIMIT + 1\n\n\n'
        "def tiny(a, b):\n    return a < b\n\n\n"
        'def f(a: "int" = 1) -> "str":\n    """Doc < string."""\n    n: "Final" = "q"\n    return a < n\n'
    )
    mutations = mutations_for_file(PATH, src)
    assert mutations and {m.function for m in mutations} == {"f"}
    for mutation in mutations:
        (first, last) = mutation.lines
        assert 15 <= first <= last <= 16
        assert mutation.mutated.splitlines()[:14] == src.splitlines()[:14]
    assert "n: \"Final\" = 'Q'" in {line.strip() for m in mutations for line in m.mutated.splitlines()}


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_mod.py",
        "pkg/test_mod.py",
        "pkg/mod_test.py",
        "conftest.py",
        "pkg/testing/util.py",
        "pkg/tests/x.py",
    ],
)
def test_test_files_are_skipped(path: str) -> None:
    assert is_test_path(path)
    assert mutations_for_file(path, REAL["pkg/textwrap.py"]) == []
    assert not is_test_path("pkg/textwrap.py") and not is_test_path("pkg/contest.py")


def test_unparsable_and_non_python_files_give_nothing() -> None:
    assert mutations_for_file(PATH, "def f(:\n") == []
    assert mutations_for_file("pkg/data.txt", "def f(a):\n    b = a\n    return b < 1\n") == []
    with pytest.raises(ValueError, match="unknown mutation kind"):
        mutations_for_file(PATH, "x = 1\n", kinds=["nope"])


THREE = (
    "def a(x, y):\n    z = x < y\n    return z\n\n\n"
    "def b(x, y):\n    z = x and y\n    return z\n\n\n"
    "def c(x):\n    x.ok = True\n    return x\n"
)


def test_combine_two_and_three_applies_all_of_them() -> None:
    parts = [
        *of_kind("flip_comparison", THREE),
        *of_kind("flip_boolop", THREE),
        *of_kind("replace_literal", THREE),
    ]
    three = combine(parts, 3)
    expected = THREE.replace("x < y", "x >= y").replace("x and y", "x or y").replace("True", "False")
    assert three.mutated == expected and three.kind == "combine"
    assert three.components == ("flip_comparison", "flip_boolop", "replace_literal")
    assert three.function == "a,b,c" and three.lineno == 2
    two = combine(parts[1:], 2)
    assert two.mutated == THREE.replace("x and y", "x or y").replace("True", "False")
    ast.parse(two.mutated)


def test_combine_skips_overlapping_and_rejects_other_files() -> None:
    same_line = [*of_kind("flip_comparison", THREE), *of_kind("remove_statement", THREE)]
    assert same_line[1].lineno == 2  # removing `z = x < y` overlaps the comparison flip
    with pytest.raises(ValueError, match="compatible"):
        combine(same_line[:2], 2)
    pair = combine(same_line, 2)
    assert pair.components == ("flip_comparison", "remove_statement") and pair.lines == (2, 7)
    other = of_kind("replace_literal", THREE, path="pkg/other.py")
    with pytest.raises(ValueError, match="one file"):
        combine([same_line[0], *other], 2)


def test_combine_on_a_real_module() -> None:
    text = REAL["pkg/textwrap.py"]
    by_kind = {}
    for mutation in mutations_for_file("pkg/textwrap.py", text):
        by_kind.setdefault(mutation.kind, mutation)
    combined = combine(list(by_kind.values()), 3)
    ast.parse(combined.mutated)
    for part in combined.description.split("; "):
        assert part.split(": ", 1)[0] in combined.components
    assert len(combined.edits) >= 3
    assert 2 <= len(hunks(text, combined.mutated)) <= 3


def test_sampling_is_deterministic_and_capped() -> None:
    first = sample_mutations(REAL, seed=7, max_per_kind=3)
    again = sample_mutations(dict(reversed(REAL.items())), seed=7, max_per_kind=3)
    assert [m.key for m in first] == [m.key for m in again]
    assert [m.key for m in sample_mutations(REAL, seed=8, max_per_kind=3)] != [m.key for m in first]
    counts: dict[str, int] = {}
    for mutation in first:
        counts[mutation.kind] = counts.get(mutation.kind, 0) + 1
    assert counts == dict.fromkeys(KINDS, 3)
    only = sample_mutations(REAL, seed=1, kinds=["remove_guard", "swap_if_else"])
    assert {m.kind for m in only} == {"remove_guard", "swap_if_else"}
    assert sorted(m.key for m in only) == sorted(
        m.key
        for path, text in REAL.items()
        for m in mutations_for_file(path, text, ["remove_guard", "swap_if_else"])
    )


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *config, *args], cwd=repo, capture_output=True, text=True, check=False)


def test_fix_patch_applies_with_git_and_restores_the_original(tmp_path: Path) -> None:
    text = REAL["pkg/statistics.py"]
    picked = sample_mutations({"pkg/statistics.py": text}, seed=3, max_per_kind=1)
    no_newline = "def f(a):\n    b = a\n    return b < 1"
    picked += [combine(picked[:3], 3), *of_kind("flip_comparison", no_newline)]
    repo = tmp_path / "repo"
    repo.mkdir()
    assert _git(repo, "init", "-q").returncode == 0
    for mutation in picked:
        target = repo / mutation.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(mutation.mutated.encode("utf-8"))
        assert _git(repo, "add", "-A").returncode == 0
        assert _git(repo, "commit", "-q", "-m", "bug").returncode == 0
        patch = fix_patch(mutation)
        assert patch.startswith(f"diff --git a/{mutation.path} b/{mutation.path}\n--- a/{mutation.path}\n")
        assert f"\n+++ b/{mutation.path}\n" in patch
        (tmp_path / "fix.diff").write_text(patch, encoding="utf-8")
        check = _git(repo, "apply", "--check", str(tmp_path / "fix.diff"))
        assert check.returncode == 0, (mutation.description, check.stderr)
        assert _git(repo, "apply", str(tmp_path / "fix.diff")).returncode == 0
        assert target.read_bytes() == mutation.original.encode("utf-8")
