"""Infrastructure failures say why on the console (issue 10, item 9): an unknown repository and a
missing commit are printed, one line per distinct cause with the instance ids, and a run where every
instance failed for such a reason exits 1."""

from __future__ import annotations

from badinput import invoke, missing_source, row, write_jsonl
from tests.conftest import make_git_tree


def unreachable(tmp_path):
    """One instance whose repository does not exist, one whose commit is not in a real repository."""
    tree, _ = make_git_tree(tmp_path / "repo", {"README": "a real repository\n"})
    rows = [row("org__gone-1", missing_source(tmp_path)), row("org__repo-2", str(tree), base_commit="1" * 40)]
    return write_jsonl(tmp_path / "data.jsonl", rows)


def cause_line(output: str, words: str, instance_id: str) -> bool:
    return any(words in line and f"[1: {instance_id}]" in line for line in output.splitlines())


def test_eval_prints_each_infrastructure_cause_and_exits_1_when_all_failed(tmp_path):
    out = tmp_path / "out"
    result = invoke("eval", "-d", unreachable(tmp_path), "--out", out, "--logs-dir", out / "logs")
    assert result.exit_code == 1, result.output
    assert "errors 2 (infrastructure 2)" in result.output
    assert cause_line(result.output, "RepoError: repository not found", "org__gone-1"), result.output
    assert cause_line(result.output, "RepoError: commit not found", "org__repo-2"), result.output


def test_rollout_prints_each_cause_and_exits_1_when_every_episode_failed(tmp_path):
    result = invoke("rollout", "-d", unreachable(tmp_path), "--out", tmp_path / "out", "--no-eval")
    assert result.exit_code == 1, result.output
    assert cause_line(result.output, "repository not found", "org__gone-1"), result.output
    assert cause_line(result.output, "commit not found", "org__repo-2"), result.output
