"""Broken settings and files stop a command with one clear message and exit status 2, never a
traceback (issue 10, items 4, 5, 6): an unusable ``SWEWORLD_HOME``, a corrupt ``.jsonl.gz``
dataset, a bad agent YAML, and numeric options out of their range."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from badinput import dataset, flat, invoke

HOME_COMMANDS = [("env", "ls"), ("env", "rm", "abc"), ("eval",), ("exec", "--instance", "org__repo-1", "--", "true")]


def no_traceback(result) -> bool:
    return "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))


def with_dataset(args: tuple[str, ...], tmp_path: Path) -> list[str]:
    """``args`` with ``--dataset`` (an offline one) after the command, for the commands that take one."""
    filled = [a.format(dir=tmp_path) for a in args]
    if args[0] in ("synth", "demo") or args[:2] in (("env", "ls"), ("env", "rm")):
        return filled
    at = 2 if args[0] == "env" else 1
    return [*filled[:at], "-d", str(dataset(tmp_path)), *filled[at:]]


@pytest.mark.parametrize("args", HOME_COMMANDS, ids=[" ".join(a) for a in HOME_COMMANDS])
def test_sweworld_home_that_is_a_file_is_one_message_naming_the_variable(tmp_path, args):
    home = tmp_path / "home-file"
    home.write_text("not a directory\n")
    result = invoke(*with_dataset(args, tmp_path), env={"SWEWORLD_HOME": str(home)})
    assert result.exit_code == 2, result.output
    assert f"SWEWORLD_HOME={home}" in result.output and "not a directory" in result.output
    assert no_traceback(result) and len(result.output.strip().splitlines()) == 2


def test_sweworld_home_that_cannot_be_created_is_one_message(tmp_path):
    home = "/proc/sweworld-cannot-be-here"  # no one may create entries in /proc, root included
    result = invoke("eval", "-d", dataset(tmp_path), env={"SWEWORLD_HOME": home})
    assert result.exit_code == 2, result.output
    assert f"SWEWORLD_HOME={home}" in result.output and no_traceback(result)


def corrupt_gzip(path: Path) -> Path:
    data = bytearray(gzip.compress(b'{"instance_id": "o__p-1", "repo": "o/p"}\n' * 50, mtime=0))
    data[10:18] = b"\xff" * 8  # the first deflate block: zlib.error, not BadGzipFile
    path.write_bytes(bytes(data))
    with pytest.raises(zlib.error):
        gzip.decompress(path.read_bytes())
    return path


def test_corrupt_jsonl_gz_dataset_is_a_dataset_error_naming_the_file(tmp_path):
    data = corrupt_gzip(tmp_path / "broken.jsonl.gz")
    result = invoke("eval", "-d", data, "--out", tmp_path / "run", "--logs-dir", tmp_path / "run" / "logs")
    assert result.exit_code == 2, result.output
    assert f"error: {data}: not a valid gzip file" in result.output and no_traceback(result)
    assert not (tmp_path / "run").exists()


def test_bad_agent_config_yaml_is_one_error_with_file_and_line(tmp_path):
    config = tmp_path / "agent.yaml"
    config.write_text("step_limit: 5\nsystem_template: [unclosed\n  instance_template: x: y\n")
    result = invoke("rollout", "-d", dataset(tmp_path), "--agent-config", config, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert f"error: {config}:3: invalid YAML" in result.output and no_traceback(result)
    assert len(result.output.strip().splitlines()) == 2 and not (tmp_path / "out").exists()


def test_agent_config_with_a_bad_field_names_the_field(tmp_path):
    config = tmp_path / "agent.yaml"
    config.write_text("system_template: s\ninstance_template: i\nstep_limit: many\n")
    result = invoke("rollout", "-d", dataset(tmp_path), "--agent-config", config, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert f"error: {config}: invalid agent config: field 'step_limit'" in result.output


SYNTH = ("synth", "--repo", "{dir}/no-repo", "--out", "{dir}/x.jsonl")
NUMBERS = [
    ("eval", "--timeout", "-1"), ("eval", "--timeout", "0"), ("eval", "--workers", "0"),
    ("exec", "--instance", "org__repo-1", "--timeout", "-5", "--", "true"),
    ("shell", "--instance", "org__repo-1", "--timeout", "0"),
    ("validate", "--timeout", "0"), ("validate", "--workers", "-1"),
    ("rollout", "--workers", "0"), ("rollout", "--n-samples", "0"), ("rollout", "--step-limit", "0"),
    ("rollout", "--max-tokens", "0"), ("rollout", "--temperature", "-0.5"),
    ("env", "build", "--workers", "0"),
    (*SYNTH, "--max", "0"), (*SYNTH, "--max-candidates", "0"), (*SYNTH, "--max-per-kind", "0"),
    (*SYNTH, "--combine-share", "1.5"), (*SYNTH, "--timeout", "0"), (*SYNTH, "--workers", "0"),
    ("demo", "--instances", "0"), ("demo", "--workers", "0"),
]


@pytest.mark.parametrize("args", NUMBERS, ids=[" ".join(a).replace("{dir}/", "") for a in NUMBERS])
def test_numeric_option_out_of_range_is_refused_at_parse_time(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # default outputs land here, where the test looks
    command = with_dataset(args, tmp_path)
    option = next(a for a in reversed(args) if a.startswith("--") and a != "--")
    before = sorted(tmp_path.rglob("*"))
    result = invoke(*command)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}" in flat(result)
    assert sorted(tmp_path.rglob("*")) == before
