"""Text (XML) actions: parse, render, prompt, format errors."""

from __future__ import annotations

import pytest

from sweworld.agents.actions import (
    FormatError,
    ParsedAction,
    parse_text_action,
    render_text_action,
    require_text_action,
    tools_prompt,
)

EDITOR = {"type": "function", "function": {
    "name": "str_replace_editor", "description": "View, create and edit files.",
    "parameters": {"type": "object", "required": ["command", "path"], "properties": {
        "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"],
                    "description": "The command to run."},
        "path": {"type": "string", "description": "Absolute path."},
        "old_str": {"type": "string"}}}}}
BASH = {"type": "function", "function": {
    "name": "execute_bash", "description": "Run a bash command.",
    "parameters": {"type": "object", "required": ["command"],
                   "properties": {"command": {"type": "string"}}}}}


def test_round_trip():
    args = {"command": "str_replace", "path": "/testbed/a.py",
            "old_str": "def f(x):\n    return x\n", "new_str": "  indented\n\n\ttab\n"}
    text = render_text_action("str_replace_editor", args, thought="Fix f.")
    action = parse_text_action(text)
    assert action == ParsedAction(name="str_replace_editor", arguments=args, thought="Fix f.")


def test_render_shape():
    assert render_text_action("execute_bash", {"command": "ls"}) == (
        "<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>")
    assert parse_text_action(render_text_action("submit", {})) == ParsedAction(name="submit")


def test_render_non_string_values_as_json():
    action = parse_text_action(render_text_action("view", {"view_range": [1, 20]}))
    assert action.arguments == {"view_range": "[1, 20]"}


def test_multiline_values_keep_inner_newlines_strip_one_outer():
    text = ("<function=str_replace_editor>\n"
            "<parameter=command>create</parameter>\n"
            "<parameter=file_text>\n\nline1\n    line2\n\n</parameter>\n"
            "</function>")
    action = parse_text_action(text)
    assert action.arguments["file_text"] == "\nline1\n    line2\n"
    assert action.arguments["command"] == "create"


def test_whitespace_tolerated_in_tags():
    text = "<function = execute_bash >\n  <parameter = command >echo hi</parameter >\n</function>"
    action = parse_text_action(text)
    assert action.name == "execute_bash"
    assert action.arguments == {"command": "echo hi"}


def test_thought_is_text_before_block():
    text = ("Let me look at the repository layout first.\nThen I'll decide.\n\n"
            "<function=execute_bash><parameter=command>ls</parameter></function>\ntrailing")
    action = parse_text_action(text)
    assert action.thought == "Let me look at the repository layout first.\nThen I'll decide."
    assert action.notes == []


def test_no_block_is_none():
    assert parse_text_action("I think the bug is in foo.py.") is None
    assert parse_text_action("") is None
    assert parse_text_action(None) is None
    with pytest.raises(FormatError) as info:
        require_text_action("just words")
    message = str(info.value)
    assert "no <function=...> block" in message
    assert "<function=FUNCTION_NAME>" in message and "</function>" in message


def test_two_blocks_first_used_and_noted():
    text = ("a <function=execute_bash><parameter=command>ls</parameter></function>\n"
            "<function=submit></function>")
    action = parse_text_action(text)
    assert action.name == "execute_bash" and action.arguments == {"command": "ls"}
    assert len(action.notes) == 1 and "2 function blocks" in action.notes[0]


def test_unclosed_block_read_to_end_with_note():
    action = parse_text_action("ok\n<function=execute_bash>\n<parameter=command>pytest -x</parameter>\n")
    assert action.name == "execute_bash" and action.arguments == {"command": "pytest -x"}
    assert action.thought == "ok"
    assert "not closed" in action.notes[0]


def test_tools_prompt_describes_tools_and_format():
    prompt = tools_prompt([EDITOR, BASH])
    assert "BEGIN FUNCTION: str_replace_editor" in prompt and "BEGIN FUNCTION: execute_bash" in prompt
    assert "(required) command" in prompt and "(optional) old_str" in prompt
    assert "`str_replace`" in prompt and "Absolute path." in prompt
    assert "<function=FUNCTION_NAME>" in prompt and "EXACTLY ONE" in prompt
    example = prompt.split("For example:\n", 1)[1]
    parsed = parse_text_action(example)
    assert parsed.name == "str_replace_editor" and set(parsed.arguments) == {"command", "path"}


def test_format_error_message():
    error = FormatError("parameter 'command' is missing")
    assert error.reason == "parameter 'command' is missing"
    assert str(error).startswith("Format error: parameter 'command' is missing")
    assert "<parameter=PARAMETER_NAME>" in str(error)
