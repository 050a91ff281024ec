"""execute_bash, search, submit, truncation and the ToolSet's error handling over a real sandbox."""

from __future__ import annotations

import pytest

from sweworld.tools import default_tools, truncate_observation

pytestmark = pytest.mark.bwrap


@pytest.fixture
def tools():
    return default_tools()


def test_truncate_keeps_head_and_tail():
    assert truncate_observation("short") == "short"
    text = "A" * 6000 + "B" * 6000
    out = truncate_observation(text, max_chars=1000)
    assert out.startswith("A" * 500) and out.endswith("B" * 500)
    assert "[... 11000 characters cut ...]" in out
    lines = "\n".join(f"l{i}" for i in range(1000))
    out = truncate_observation(lines, max_lines=10)
    assert out.split("\n")[:5] == ["l0", "l1", "l2", "l3", "l4"] and out.endswith("l999")
    assert "[... 990 lines cut ...]" in out and "l500" not in out


def test_bash_shows_output_and_exit_code(sandbox, tools):
    res = tools.call(sandbox, "execute_bash", {"command": "cat README; (exit 3)"})
    assert res.observation == "small tree\n[exit code: 3]" and res.exit_code == 3 and not res.error
    res = tools.call(sandbox, "execute_bash", {"command": "cd pkg && pwd"})
    assert res.observation == "/testbed/pkg\n[exit code: 0]"


def test_bash_long_output_cut_in_the_middle(sandbox, tools):
    res = tools.call(sandbox, "execute_bash", {"command": "seq 1 100000; false"})
    lines = res.observation.split("\n")
    assert lines[0] == "1" and lines[-2] == "100000" and lines[-1] == "[exit code: 1]"
    assert any("cut ..." in line for line in lines) and "50000\n" not in res.observation
    assert len(res.observation) < 11_000


def test_bash_timeout_is_reported(sandbox, tools):
    res = tools.call(sandbox, "execute_bash", {"command": "echo start; sleep 30", "timeout": 1})
    assert res.observation.startswith("start") and res.exit_code == 124
    assert res.observation.endswith("[command timed out after 1 seconds and was killed; exit code: 124]")
    assert not res.error
    assert tools.call(sandbox, "execute_bash", {"command": "echo alive"}).observation.startswith("alive")


def test_bash_empty_command_is_an_error(sandbox, tools):
    for args in ({"command": "  "}, {}, {"command": "ls", "timeout": -1}):
        res = tools.call(sandbox, "execute_bash", args)
        assert res.error and res.exit_code is None, args


def test_search_directory_and_file(sandbox, tools):
    sandbox.run("mkdir -p /testbed/.git/x && echo 'add add' > /testbed/.git/x/f")
    res = tools.call(sandbox, "search", {"search_term": "add"})
    assert 'Found 4 matches for "add" in /testbed' in res.observation
    assert "/testbed/pkg/__init__.py (1 match)" in res.observation
    assert "/testbed/tests/test_add.py (3 matches)" in res.observation
    assert ".git" not in res.observation and "README" not in res.observation
    res = tools.call(sandbox, "search", {"search_term": "add", "path": "/testbed/tests/test_add.py"})
    assert "     1: from pkg import add" in res.observation
    assert "     3: def test_add():" in res.observation
    assert "     4:     assert add(1, 2) == 3" in res.observation and "     2:" not in res.observation
    res = tools.call(sandbox, "search", {"search_term": "nowhere-to-be-found"})
    assert "No matches found" in res.observation
    res = tools.call(sandbox, "search", {"search_term": "add", "path": "/testbed/nope"})
    assert "does not exist" in res.observation


def test_search_caps_the_number_of_files(sandbox, tools):
    sandbox.run("mkdir /testbed/many && for i in $(seq 1 120); do echo needle > /testbed/many/f$i.txt; done")
    res = tools.call(sandbox, "search", {"search_term": "needle", "path": "many"})
    assert res.observation.count("(1 match)") == 100
    assert "20 more files not shown" in res.observation and "120 files matched" in res.observation


def test_submit_and_finish_alias(sandbox, tools):
    for name, args in (("submit", {}), ("finish", {"result": "done"})):
        res = tools.call(sandbox, name, args)
        assert res.submitted and res.observation == "submitted" and not res.error


def test_unknown_tool_and_bad_arguments_are_error_results(sandbox, tools):
    res = tools.call(sandbox, "rm_rf", {})
    assert res.error and "execute_bash" in res.observation and "str_replace_editor" in res.observation
    res = tools.call(sandbox, "str_replace_editor", {"command": "view"})
    assert res.error and "path" in res.observation and "Missing" in res.observation
    res = tools.call(sandbox, "execute_bash", {"command": "ls", "cwd": "/"})
    assert res.error and "cwd" in res.observation and "command (required)" in res.observation
    res = tools.call(sandbox, "str_replace_editor", {"command": "insert", "path": "/testbed/README",
                                                    "insert_line": "two", "new_str": "x"})
    assert res.error and "integer" in res.observation
    res = tools.call(sandbox, "execute_bash", '{"command": "echo json-args"}')
    assert res.observation.startswith("json-args")
    res = tools.call(sandbox, "execute_bash", "{not json")
    assert res.error and "JSON" in res.observation


def test_schemas_are_function_calling_json_schemas(tools):
    schemas = tools.schemas()
    assert [s["function"]["name"] for s in schemas] == tools.names == [
        "execute_bash", "str_replace_editor", "search", "submit"]
    for schema in schemas:
        assert schema["type"] == "function"
        fn = schema["function"]
        assert fn["description"] and fn["parameters"]["type"] == "object"
        props = fn["parameters"]["properties"]
        assert set(fn["parameters"]["required"]) <= set(props)
        for spec in props.values():
            assert spec["type"] in ("string", "integer", "number", "array") and spec["description"]
    editor = schemas[1]["function"]["parameters"]
    assert editor["required"] == ["command", "path"]
    assert editor["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert", "undo_edit"]
    assert tools.get("finish") is tools.get("submit")
