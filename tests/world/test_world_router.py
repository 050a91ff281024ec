"""The command router: a table of commands as agents write them (SWE-agent, OpenHands and
mini-swe-agent trajectories), each with the spans that SWT must predict; and rewritten commands run
by real bash with a stub that prints predictions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sweworld.world.router import _parse, _plain, rewrite, route
from sweworld.world.shell_mask import mask

HEREDOC = "cat <<'EOF' > reproduce.py\nfrom pkg import foo\nprint(foo(1))\nEOF"
TEST_FILE = "cat > test_fix.py << 'EOF'\nimport pytest\n\ndef test_it():\n    assert \"it's\" == 'x'\nEOF"
TIMEOUT = 'timeout 60 python -c "import pkg; print(pkg.__version__)"'
ECHO_VERSION = "echo \"version: $(python -c 'import pkg; print(pkg.__version__)')\""
LOOP = "for f in tests/test_*.py; do python -m pytest -q $f; done"
FIND_EXEC = "find . -name '*.py' -exec python -m py_compile {} \\;"

# (command, texts of the spans SWT must predict, in order)
TABLE: list[tuple[str, list[str]]] = [
    # navigation and reading
    ("ls -la", []),
    ("cd /testbed && ls", []),
    ("pwd", []),
    ("ls -la && cat setup.py", []),
    ("head -50 src/pkg/core.py", []),
    ("tail -n 30 CHANGES.rst", []),
    ('cd /testbed && grep -rn "def foo" src/ | head -20', []),
    ("grep -rn 'class Foo' --include=*.py .", []),
    ('grep -r "import numpy" . | wc -l', []),
    ("rg -n 'def validate' src", []),
    ("egrep -n 'TODO|FIXME' setup.py", []),
    ('find . -name "*.py" | xargs grep -l foo', []),
    ("find /testbed -type f -name '*.py' -path '*tests*' | head -20", []),
    ("find . -name '*.pyc' -delete", []),
    ("find . -name '*.py' -exec grep -l 'Foo' {} \\;", []),
    ("sed -n '10,40p' file.py", []),
    ("sed -n 1,80p /testbed/src/pkg/utils.py", []),
    ("sed -i 's/old_name/new_name/g' src/pkg/core.py", []),
    ("sed -i '42s/.*/    return x/' pkg/mod.py && sed -n '40,45p' pkg/mod.py", []),
    ("nl -ba file.py | sed -n 1,50p", []),
    ("awk 'NR>=100 && NR<=120' astropy/io/fits/card.py", []),
    ("wc -l src/pkg/*.py", []),
    ("diff -u a.py b.py", []),
    ("sort requirements.txt | uniq -c | sort -rn", []),
    ("cut -d: -f1 setup.cfg | tr a-z A-Z", []),
    ("tree -L 2 src", []),
    ("stat setup.cfg && file data.bin", []),
    ("dirname $(realpath setup.py)", []),
    ("cat $(find . -name conftest.py | head -1)", []),
    ("echo $(ls) > files.txt", []),
    ("ls src/ 2>/dev/null || echo missing", []),
    ("# just looking\nls src  # and a comment", []),
    ("", []),
    # git
    ("git status", []),
    ("git diff", []),
    ("git diff HEAD -- src/pkg/core.py", []),
    ("git log --oneline -5", []),
    ("cd /testbed && git --no-pager log -p -1 -- setup.py", []),
    ("git show HEAD:src/pkg/core.py | head -40", []),
    ("git grep -n 'def parse' -- '*.py'", []),
    ("git blame -L 10,20 src/pkg/core.py", []),
    ("git checkout -- src/pkg/core.py", []),
    ("git stash && git stash pop", []),
    ("git -C /testbed diff --stat", []),
    ("git bisect run pytest tests/test_a.py", ["git bisect run pytest tests/test_a.py"]),
    # files and shell
    ("mkdir -p tests/tmp && touch tests/tmp/__init__.py", []),
    ("rm -f reproduce.py", []),
    ("rm -rf build/ dist/ *.egg-info", []),
    ("mv reproduce.py /tmp/", []),
    ("cp src/pkg/core.py /tmp/core_backup.py", []),
    ("chmod +x run.sh", []),
    ("export PYTHONPATH=/testbed:$PYTHONPATH", []),
    ("echo 'print(1)' > t.py", []),
    ("printf 'a\\nb\\n' >> notes.txt", []),
    (HEREDOC, []),
    (TEST_FILE, []),
    ("cat <<EOF > notes.md\nHOME is $HOME, don't\nEOF", []),
    ("cat <<-'PY' > x.py\n\tprint('$x')\n\tPY\nls", []),
    ("test -f setup.py && echo yes", []),
    ("[ -d tests ] || mkdir tests", []),
    ('[[ -f reproduce.py && "$x" == y ]] && rm reproduce.py', []),
    ("echo $((3 * 4)); ((n++))", []),
    ("bash -c 'ls | wc -l'", []),
    ("true", []),
    # execution
    ("python reproduce.py", ["python reproduce.py"]),
    ("python3 reproduce.py", ["python3 reproduce.py"]),
    ("python3.9 -V", ["python3.9 -V"]),
    ("cd /testbed && python reproduce.py", ["python reproduce.py"]),
    (HEREDOC + "\npython reproduce.py", ["python reproduce.py"]),
    ("cat <<'EOF' > r.py && python r.py\nprint('$x')\nEOF", ["python r.py"]),
    ("python -m pytest tests/test_x.py -x -q 2>&1 | tail -30", ["python -m pytest tests/test_x.py -x -q"]),
    ("pytest tests/test_core.py::test_parse -xvs", ["pytest tests/test_core.py::test_parse -xvs"]),
    (
        "cd /testbed && python -m pytest -q tests/ -k 'parse and not slow' 2>&1 | head -50",
        ["python -m pytest -q tests/ -k 'parse and not slow'"],
    ),
    ("python -c 'print(1)'", ["python -c 'print(1)'"]),
    ("python -m json.tool data.json", ["python -m json.tool data.json"]),
    (
        'python3 -c "import sympy; print(sympy.__version__)" | head',
        ['python3 -c "import sympy; print(sympy.__version__)"'],
    ),
    (TIMEOUT, [TIMEOUT]),
    ("echo 'x = 1' >> f.py && python f.py", ["python f.py"]),
    ("python reproduce.py > out.txt 2>&1; cat out.txt", ["python reproduce.py"]),
    ("python reproduce.py 2>&1 | grep -i error", ["python reproduce.py"]),
    ('python reproduce.py; echo "exit code: $?"', ["python reproduce.py"]),
    ("pip install -e .", ["pip install -e ."]),
    (
        "pip install -q pytest==7.4.0 && python -m pytest tests/test_a.py",
        ["pip install -q pytest==7.4.0", "python -m pytest tests/test_a.py"],
    ),
    ("pip list | grep numpy", ["pip list"]),
    ("uv pip install -e '.[test]'", ["uv pip install -e '.[test]'"]),
    ("conda install -y numpy", ["conda install -y numpy"]),
    ("python setup.py build_ext --inplace", ["python setup.py build_ext --inplace"]),
    ("tox -e py39", ["tox -e py39"]),
    ("nox -s tests", ["nox -s tests"]),
    ("make test", ["make test"]),
    ("cd tests && ./runtests.py --verbosity 2 queries", ["./runtests.py --verbosity 2 queries"]),
    ("django-admin startproject mysite", ["django-admin startproject mysite"]),
    ("./manage.py migrate", ["./manage.py migrate"]),
    ("bash run_tests.sh", ["bash run_tests.sh"]),
    ("sh -c 'python x.py'", ["sh -c 'python x.py'"]),
    ("node index.js", ["node index.js"]),
    ("env PYTHONPATH=src python -m pkg", ["env PYTHONPATH=src python -m pkg"]),
    ("PYTHONPATH=src python -m pkg.cli --help", ["PYTHONPATH=src python -m pkg.cli --help"]),
    ("nohup python server.py &", ["nohup python server.py"]),
    ("time python bench.py | tail -3", ["time python bench.py"]),
    ("find . -name 'test_*.py' | xargs python -m pytest -q", ["xargs python -m pytest -q"]),
    (FIND_EXEC, [FIND_EXEC]),
    ("python - <<'EOF'\nimport pkg\nprint(pkg.__file__)\nEOF", ["python -"]),
    ("cat <<EOF | python\nprint(2)\nEOF", ["python"]),
    (LOOP, [LOOP]),
    ("if python -c 'import pkg'; then echo ok; fi", ["python -c 'import pkg'"]),
    ("(cd src && python -m pkg) > log.txt", ["python -m pkg"]),
    (ECHO_VERSION, [ECHO_VERSION]),
    ("diff <(python old.py) <(python new.py)", ["diff <(python old.py) <(python new.py)"]),
    ("which python", ["which python"]),
    ("python --version", ["python --version"]),
    ("source venv/bin/activate && python x.py", ["source venv/bin/activate", "python x.py"]),
    ("mypy src/pkg", ["mypy src/pkg"]),
    ("$PYTHON reproduce.py", ["$PYTHON reproduce.py"]),
    ("coverage run -m pytest && coverage report", ["coverage run -m pytest", "coverage report"]),
    (
        "cd /testbed && sed -i 's/a/b/' x.py && python -m pytest tests/test_x.py -q",
        ["python -m pytest tests/test_x.py -q"],
    ),
    ("grep -n foo x.py; python -m pytest -q 2>&1 | tail -5; git diff", ["python -m pytest -q"]),
    ("some_tool --flag", ["some_tool --flag"]),
    ("case $1 in a) python x.py;; esac", ["case $1 in a) python x.py;; esac"]),
]


@pytest.mark.parametrize(("command", "expected"), TABLE, ids=[c[:50] for c, _ in TABLE])
def test_route_table(command: str, expected: list[str]) -> None:
    plan = route(command)
    assert [s.text for s in plan.spans] == expected
    assert all(command[s.start : s.end] == s.text and s.reason for s in plan.spans)
    assert plan.all_real == (not expected)


def test_table_is_large() -> None:
    assert len(TABLE) >= 80


def test_plain_fast_path_agrees_with_bashlex() -> None:
    plain = [c for c, _ in TABLE if _plain(c)] + ["X=1", "  ls -la  ", "/usr/bin/python3 -V", "exit 1"]
    assert len(plain) > 30
    for command in plain:
        assert _plain(command) == _parse(command), command
    assert _plain("time python x") is None and _plain("ls | wc") is None and _plain("  ") is None


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("timeout 10 python x.py", "timeout > interpreter: python"),
        ("pip install -e .", "pip: install (install)"),
        ("pip freeze", "pip: freeze (environment query)"),
        ("echo $(python -c 1)", "substitution > interpreter: python"),
        ("./manage.py test", "script: ./manage.py"),
        ("frobnicate", "unknown program: frobnicate"),
        ("command -v python", "environment query: command"),
        (LOOP, "for loop > interpreter: python"),
    ],
)
def test_reasons(command: str, reason: str) -> None:
    assert route(command).spans[0].reason == reason


def test_unparseable_goes_whole_and_parsed_flags() -> None:
    plan = route("arr=(1 2 3); echo ${arr[0]}")
    assert not plan.parsed and plan.all_sim and plan.spans[0].reason.startswith("unparseable")
    assert route("python x.py && ls").parsed and not route("python x.py && ls").all_sim
    assert route("python x.py").all_sim


@pytest.mark.parametrize(
    "command",
    ["ls > $(python -c 'print(1)')", "cat > f.sh <<EOF\n$(python gen.py)\nEOF\nls"],
)
def test_execution_outside_command_words_goes_whole(command: str) -> None:
    plan = route(command)
    assert plan.parsed and [s.text for s in plan.spans] == [command]


def test_span_context_and_kept_redirections() -> None:
    (span,) = route("python <<'EOF' x.py\nprint(1)\nEOF").spans
    assert span.text == "python <<'EOF' x.py" and span.kept == "<<'EOF'"
    assert span.context == "python <<'EOF' x.py\nprint(1)\nEOF"
    (span,) = route("X=1 python x.py 2>&1 | tail").spans
    assert span.context == "X=1 python x.py 2>&1"


def test_mask_keeps_offsets() -> None:
    for command, _ in TABLE:
        assert len(mask(command)) == len(command)
    assert mask("cat <<'EOF' > f\ndon't\nEOF") == "cat <<EOF   > f\n     \nEOF"


def test_rewrite_replaces_spans_in_order() -> None:
    command = "pip install -q x && python a.py | grep y; python b.py > o"
    assert rewrite(command, route(command)) == "S 0 && S 1 | grep y; S 2 > o".replace("S", "__sweworld_sim")
    assert rewrite("ls -la", route("ls -la")) == "ls -la"
    with pytest.raises(ValueError):
        rewrite("ls", route("pwd"))


PREAMBLE = """__sweworld_sim() {
  cat "$SIMDIR/$1.out"; cat "$SIMDIR/$1.err" >&2; return "$(cat "$SIMDIR/$1.rc")"
}
"""


def run_simulated(tmp_path: Path, command: str, predictions: list[tuple[str, str, int]]):
    """Route and rewrite ``command``, store the predictions and run it with real bash."""
    plan = route(command)
    assert len(plan.spans) == len(predictions)
    simdir = tmp_path / ".sim"
    simdir.mkdir(exist_ok=True)
    for index, (out, err, code) in enumerate(predictions):
        (simdir / f"{index}.out").write_text(out)
        (simdir / f"{index}.err").write_text(err)
        (simdir / f"{index}.rc").write_text(str(code))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    script = PREAMBLE + rewrite(command, plan)
    return subprocess.run(
        ["bash", "-c", script],
        cwd=work,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "SIMDIR": str(simdir)},
    )


def test_pipeline_filters_predicted_output(tmp_path: Path) -> None:
    done = run_simulated(tmp_path, "python x.py | grep y", [("a\ny1\nb\ny2\n", "", 0)])
    assert done.stdout == "y1\ny2\n" and done.returncode == 0


def test_redirection_writes_predicted_output(tmp_path: Path) -> None:
    done = run_simulated(tmp_path, "python x.py > out.txt 2> err.txt; cat out.txt", [("hi\n", "warn\n", 0)])
    assert done.stdout == "hi\n"
    assert (tmp_path / "work" / "err.txt").read_text() == "warn\n"


def test_cd_is_real(tmp_path: Path) -> None:
    done = run_simulated(tmp_path, "mkdir sub && cd sub && python x.py; pwd", [("ran\n", "", 0)])
    assert done.stdout.splitlines() == ["ran", str(tmp_path / "work" / "sub")]


def test_exit_codes_propagate(tmp_path: Path) -> None:
    done = run_simulated(tmp_path, "python fail.py && echo no || echo yes", [("", "Traceback\n", 1)])
    assert (done.stdout, done.stderr) == ("yes\n", "Traceback\n")
    done = run_simulated(tmp_path, "python x.py", [("", "", 3)])
    assert done.returncode == 3


def test_heredoc_file_is_written_and_stderr_merges(tmp_path: Path) -> None:
    command = HEREDOC + "\npython reproduce.py 2>&1 | tail -1"
    done = run_simulated(tmp_path, command, [("1\n", "Error: boom\n", 1)])
    assert done.stdout == "Error: boom\n"
    assert (tmp_path / "work" / "reproduce.py").read_text() == "from pkg import foo\nprint(foo(1))\n"


def test_loop_runs_its_prediction_once(tmp_path: Path) -> None:
    done = run_simulated(
        tmp_path, "for i in 1 2 3; do python x.py $i; done > log; wc -l < log", [("a\nb\n", "", 0)]
    )
    assert done.stdout.strip() == "2"


def test_unparseable_command_runs_the_stub_whole(tmp_path: Path) -> None:
    done = run_simulated(tmp_path, "arr=(a b); python ${arr[0]}", [("whole\n", "", 0)])
    assert done.stdout == "whole\n"
