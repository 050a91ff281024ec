"""str_replace_editor over a real sandbox: every command and every error path."""

from __future__ import annotations

import pytest

from sweworld.tools import default_tools

pytestmark = pytest.mark.bwrap

INIT = "/testbed/pkg/__init__.py"


@pytest.fixture
def tools():
    return default_tools()


def edit(tools, sb, **args):
    return tools.call(sb, "str_replace_editor", args)


def test_view_file_is_numbered_like_cat_n(sandbox, tools):
    res = edit(tools, sandbox, command="view", path=INIT)
    assert not res.error
    assert res.observation.endswith("     1\tdef add(a, b):\n     2\t    return a + b")
    assert "cat -n" in res.observation


def test_view_range_and_to_the_end(sandbox, tools):
    sandbox.write_file("/testbed/five.txt", "".join(f"line{i}\n" for i in range(1, 6)))
    res = edit(tools, sandbox, command="view", path="/testbed/five.txt", view_range=[2, 3])
    assert res.observation.splitlines()[1:] == ["     2\tline2", "     3\tline3"]
    res = edit(tools, sandbox, command="view", path="/testbed/five.txt", view_range=[4, -1])
    assert res.observation.splitlines()[1:] == ["     4\tline4", "     5\tline5"]
    # a text-format action sends the range as a string
    res = edit(tools, sandbox, command="view", path="/testbed/five.txt", view_range="[5, 5]")
    assert res.observation.splitlines()[1:] == ["     5\tline5"]
    for bad in ([0, 2], [9, 10], [3, 2], [1]):
        res = edit(tools, sandbox, command="view", path="/testbed/five.txt", view_range=bad)
        assert res.error and "view_range" in res.observation, bad


def test_view_directory_two_levels_no_hidden(sandbox, tools):
    sandbox.run("mkdir -p /testbed/pkg/sub/deeper && touch /testbed/pkg/sub/deeper/x.py /testbed/.hidden")
    res = edit(tools, sandbox, command="view", path="/testbed")
    lines = res.observation.splitlines()[1:]
    assert "/testbed/pkg/" in lines and "/testbed/pkg/__init__.py" in lines
    assert "/testbed/README" in lines and "/testbed/tests/test_add.py" in lines
    assert "/testbed/pkg/sub/" in lines
    assert not any("deeper" in line for line in lines)          # third level
    assert not any("/." in line for line in lines)              # .git, .hidden
    res = edit(tools, sandbox, command="view", path="/testbed/pkg", view_range=[1, 2])
    assert res.error


def test_create_and_refuse_overwrite(sandbox, tools):
    res = edit(tools, sandbox, command="create", path="/testbed/pkg/new.py", file_text="X = 1\n")
    assert not res.error and "created" in res.observation
    assert sandbox.read_file("/testbed/pkg/new.py") == "X = 1\n"
    res = edit(tools, sandbox, command="create", path="/testbed/pkg/new.py", file_text="X = 2\n")
    assert res.error and "already exists" in res.observation
    assert sandbox.read_file("/testbed/pkg/new.py") == "X = 1\n"
    res = edit(tools, sandbox, command="create", path=INIT, file_text="")
    assert res.error and sandbox.read_file(INIT).startswith("def add")
    res = edit(tools, sandbox, command="create", path="/testbed/README/inside.py", file_text="x")
    assert res.error and "Could not write" in res.observation
    res = edit(tools, sandbox, command="create", path="/testbed/other.py")
    assert res.error and "file_text" in res.observation


def test_str_replace_unique_shows_snippet(sandbox, tools):
    res = edit(tools, sandbox, command="str_replace", path=INIT, old_str="a + b", new_str="b + a")
    assert not res.error
    assert "     1\tdef add(a, b):\n     2\t    return b + a\nReview" in res.observation
    assert sandbox.read_file(INIT) == "def add(a, b):\n    return b + a\n"


def test_str_replace_zero_and_multiple_matches(sandbox, tools):
    res = edit(tools, sandbox, command="str_replace", path=INIT, old_str="a * b", new_str="x")
    assert "No replacement was performed" in res.observation and "did not appear" in res.observation
    sandbox.write_file("/testbed/dup.py", "x = 1\ny = 2\nx = 1\n\nx = 1\n")
    res = edit(tools, sandbox, command="str_replace", path="/testbed/dup.py", old_str="x = 1", new_str="x = 3")
    assert "No replacement was performed" in res.observation
    assert "(3)" in res.observation and "[1, 3, 5]" in res.observation
    assert sandbox.read_file("/testbed/dup.py") == "x = 1\ny = 2\nx = 1\n\nx = 1\n"
    res = edit(tools, sandbox, command="str_replace", path=INIT, new_str="x")
    assert res.error and "old_str" in res.observation


def test_insert_at_top_and_middle(sandbox, tools):
    res = edit(tools, sandbox, command="insert", path=INIT, insert_line=0, new_str="import os\n")
    assert not res.error and "     1\timport os" in res.observation
    res = edit(tools, sandbox, command="insert", path=INIT, insert_line="2", new_str="    '''doc'''")
    assert not res.error
    assert sandbox.read_file(INIT) == "import os\ndef add(a, b):\n    '''doc'''\n    return a + b\n"
    res = edit(tools, sandbox, command="insert", path=INIT, insert_line=99, new_str="z")
    assert res.error and "insert_line" in res.observation
    res = edit(tools, sandbox, command="insert", path=INIT, new_str="z")
    assert res.error


def test_undo_twice_then_nothing_left(sandbox, tools):
    original = sandbox.read_file(INIT)
    edit(tools, sandbox, command="str_replace", path=INIT, old_str="a + b", new_str="a - b")
    once = sandbox.read_file(INIT)
    edit(tools, sandbox, command="insert", path=INIT, insert_line=0, new_str="# top")
    res = edit(tools, sandbox, command="undo_edit", path=INIT)
    assert not res.error and sandbox.read_file(INIT) == once
    res = edit(tools, sandbox, command="undo_edit", path=INIT)
    assert not res.error and sandbox.read_file(INIT) == original
    res = edit(tools, sandbox, command="undo_edit", path=INIT)
    assert res.error and "No edit history" in res.observation


def test_undo_of_create_removes_the_file_and_reset_forgets(sandbox, tools):
    edit(tools, sandbox, command="create", path="/testbed/made.py", file_text="1\n")
    assert not edit(tools, sandbox, command="undo_edit", path="/testbed/made.py").error
    assert sandbox.run("test -e /testbed/made.py").exit_code == 1
    edit(tools, sandbox, command="str_replace", path=INIT, old_str="a + b", new_str="a - b")
    tools.reset()
    assert edit(tools, sandbox, command="undo_edit", path=INIT).error


def test_paths_must_be_absolute_and_inside_the_repository(sandbox, tools):
    res = edit(tools, sandbox, command="view", path="pkg/__init__.py")
    assert res.error and "absolute" in res.observation and "/testbed/pkg/__init__.py" in res.observation
    for outside in ("/etc/passwd", "/testbed/../etc/passwd", "/testbedx/a.py"):
        res = edit(tools, sandbox, command="view", path=outside)
        assert res.error and "outside" in res.observation, outside
    res = edit(tools, sandbox, command="create", path="/tmp/x.py", file_text="x")
    assert res.error and sandbox.run("test -e /tmp/x.py").exit_code == 1
    res = edit(tools, sandbox, command="view", path="/testbed/missing.py")
    assert res.error and "does not exist" in res.observation
    res = edit(tools, sandbox, command="delete", path=INIT)
    assert res.error and "str_replace" in res.observation


def test_diff_shows_edits_made_through_the_editor(sandbox, tools):
    edit(tools, sandbox, command="str_replace", path=INIT, old_str="a + b", new_str="a - b")
    edit(tools, sandbox, command="create", path="/testbed/pkg/extra.py", file_text="Y = 2\n")
    diff = sandbox.diff()
    assert "-    return a + b" in diff and "+    return a - b" in diff
    assert "b/pkg/extra.py" in diff and "+Y = 2" in diff
