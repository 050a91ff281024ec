"""Scripted inspect models for the inspect tests: ``mockllm/model`` replaying tool calls, and a task's
gold patch written as inspect ``text_editor`` edits (``str_replace`` of each hunk's old lines)."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from unidiff import PatchSet


def call(tool: str, **arguments: Any) -> ModelOutput:
    """One scripted reply calling ``tool`` (its usage set: mockllm would count tokens with tiktoken,
    which downloads its encoding)."""
    output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def mock_model(*outputs: ModelOutput) -> Model:
    """inspect's deterministic model, replaying ``outputs`` in order."""
    return get_model("mockllm/model", custom_outputs=list(outputs))


def gold_edits(patch: str, workdir: str = "/testbed") -> list[ModelOutput]:
    """``text_editor`` ``str_replace`` calls making ``patch``'s change (each hunk's old lines -> new)."""
    edits = []
    for patched in PatchSet(patch):
        for hunk in patched:
            old = "".join(line.value for line in hunk if not line.is_added)
            new = "".join(line.value for line in hunk if not line.is_removed)
            edits.append(call("text_editor", command="str_replace", path=f"{workdir}/{patched.path}",
                              old_str=old, new_str=new))
    return edits
