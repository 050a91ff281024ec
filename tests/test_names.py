"""``sweworld.core.names``: the one rule for names that become a path component."""

from __future__ import annotations

import pytest

from sweworld.core import names
from sweworld.core.errors import DatasetError


@pytest.mark.parametrize("name", ["psf__requests-2317", "django__django-11099", "benjaminp__six-1.16.0",
                                  "org__model", "a..b", "...", "x" * names.MAX_BYTES])
def test_swebench_ids_and_plain_names_are_safe(name):
    assert names.problem(name) is None and names.check(name, what="instance_id") == name


@pytest.mark.parametrize("name, reason", [
    ("", "empty"), (".", "names a directory"), ("..", "names a directory"), ("../../ESCAPED", "'/'"),
    ("/etc/passwd", "'/'"), ("a/b", "'/'"), ("a\\b", "'\\'"), ("a\x00b", "control character"),
    ("a\nb", "control character"), ("é" * names.MAX_BYTES, "longer than"),
])
def test_paths_and_odd_names_are_refused_with_the_reason(name, reason):
    assert reason in names.problem(name)
    with pytest.raises(DatasetError, match="cannot name a file or directory") as info:
        names.check(name, what="instance_id", where="data.jsonl:3")
    assert info.value.where == "data.jsonl:3" and reason in info.value.message


@pytest.mark.parametrize("model, directory", [("org/model", "org__model"), ("gold", "gold"),
                                              ("a/b/c:7b", "a__b__c_7b"), ("", "unknown")])
def test_model_names_map_to_swebench_directory_names(model, directory):
    assert names.model_dir(model) == directory


@pytest.mark.parametrize("model", ["..", ".", "m" * (names.MAX_BYTES + 1)])
def test_a_model_name_that_maps_to_no_directory_name_is_refused(model):
    with pytest.raises(DatasetError, match="model_name_or_path"):
        names.model_dir(model, where="preds.jsonl:1")
