"""``seam.TaskIndex`` and ``index_of``: one lookup of tasks by id or image, a dataset read once per
process (again when its file changes), a bad row failing alone, and the one prompt builder."""

from __future__ import annotations

import json

import pytest

from sweworld.core import images
from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.seam import prompt
from sweworld.seam.tasks import TaskIndex, index_of


def row(instance_id: str, **extra) -> dict:
    return {"instance_id": instance_id, "repo": "owner/pkg", "base_commit": "a" * 40, "problem_statement": "fix it",
            "version": "1", **extra}


def test_tasks_are_found_by_id_and_by_the_image_a_row_or_swebench_names():
    tasks = [Task.model_validate(row("Owner__pkg-7")),
             Task.model_validate(row("x__y-1", docker_image="registry.example/custom-image:v2"))]
    index = TaskIndex(tasks, where="dataset d")
    assert index["Owner__pkg-7"] is tasks[0] and "x__y-1" in index and list(index) == ["Owner__pkg-7", "x__y-1"]
    assert index.of_image("docker.io/registry.example/custom-image@sha256:00") is tasks[1]
    assert index.of_image(images.rebench_image("Owner__pkg-7") + ":latest") is tasks[0]  # lowercased id
    assert index.find(image=images.swebench_image("Owner__pkg-7")) is tasks[0]
    assert index.of_image("swerebench/sweb.eval.x86_64.owner_1776_pkg-8") is None
    with pytest.raises(DatasetError, match="'nope' is not in dataset d") as info:
        index.find("nope")
    assert "Owner__pkg-7" in info.value.hint


def test_a_dataset_is_read_once_and_again_when_its_file_changes(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(row("a__b-1")) + "\n")
    first = index_of(str(path))
    assert index_of(str(path)) is first and first.ids == ["a__b-1"]
    path.write_text(json.dumps(row("a__b-1")) + "\n" + json.dumps(row("a__b-2")) + "\n")
    assert index_of(str(path)).ids == ["a__b-1", "a__b-2"]


def test_a_bad_row_fails_alone_with_its_line(tmp_path):
    path = tmp_path / "tasks.jsonl"
    bad = row("a__b-2")
    del bad["base_commit"]
    path.write_text(json.dumps(row("a__b-1")) + "\n" + json.dumps(bad) + "\n")
    index = index_of(str(path))
    assert index.find("a__b-1").instance_id == "a__b-1"
    with pytest.raises(DatasetError) as info:
        index.find("a__b-2")
    assert "tasks.jsonl:2" in str(info.value.where)


def test_one_prompt_builder_with_named_styles():
    task = Task.model_validate(row("a__b-1"))
    schemas = [{"type": "function", "function": {"name": "execute_bash", "description": "run",
                                                 "parameters": {"type": "object", "properties": {}}}}]
    assert prompt.messages(task) == [{"role": "user", "content": "fix it"}] and prompt.statement(task) == "fix it"
    system, user = prompt.messages(task, "tools", schemas=schemas)
    assert system["role"] == "system" and "execute_bash" in system["content"] and user["content"] == "fix it"
    agent = prompt.messages(task, "agent")
    assert [m["role"] for m in agent] == ["system", "user"] and "fix it" in agent[-1]["content"]
    own = [{"role": "system", "content": "mine"}, {"role": "user", "content": "x"}]
    assert prompt.with_tools(own, schemas) == own
    with pytest.raises(ValueError, match="statement, tools, agent"):
        prompt.messages(task, "chat")  # type: ignore[arg-type]
