"""``sweworld mine --repos FILE --out-dir DIR``: the repos file read (overrides, datasets, duplicates,
bad lines), and real runs of the CLI over real git repositories: one without tests, one that does not
exist; a rerun resumes. The slow test mines the demo's history (real environments, real sandboxes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.core.errors import DatasetError
from sweworld.mine.batch import read_repos


def _git_repo(root: Path, files: dict[str, str]) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root, check=True,
                       capture_output=True)
    root.mkdir(parents=True)
    git("init", "-q")
    for step, (name, text) in enumerate(files.items()):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        git("add", ".")
        git("commit", "-qm", f"step {step}")
    return root


def test_repos_file_lines_overrides_and_duplicates(tmp_path: Path):
    repo = _git_repo(tmp_path / "a", {"pkg/a.py": "x = 1\n"})
    listed = tmp_path / "repos.txt"
    listed.write_text(f"# mine these\n{repo} name=me/a max=3 since=2023-01-01\n\n{repo}/  # again\n"
                      "https://github.com/owner/proj.git rev=main\nowner/other max_candidates=7\n")
    specs = read_repos(listed)
    assert [(s.repo, s.stem, s.overrides) for s in specs] == [
        ("me/a", "me__a", {"max": 3, "since": "2023-01-01"}), ("owner/proj", "owner__proj", {"rev": "main"}),
        ("owner/other", "owner__other", {"max_candidates": 7})]
    assert specs[2].source == "https://github.com/owner/other" and specs[0].where == f"{listed}:2"
    from sweworld.mine.pipeline import MineOptions
    assert specs[0].options(MineOptions(max_instances=10)).max_instances == 3


def test_repos_from_a_dataset(tmp_path: Path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in (
        {"repo": "astropy/astropy", "instance_id": "astropy__astropy-1", "version": "4.3"},
        {"repo": "astropy/astropy", "instance_id": "astropy__astropy-2"},
        {"url": "https://github.com/pallets/flask", "max": 2})))
    specs = read_repos(rows)
    assert [(s.repo, s.source, s.overrides) for s in specs] == [
        ("astropy/astropy", "https://github.com/astropy/astropy", {}),
        ("pallets/flask", "https://github.com/pallets/flask", {"max": 2})]


@pytest.mark.parametrize("text, message", [
    ("https://x.org/a/b bogus=1\n", "repos.txt:1: unknown option 'bogus'"),
    ("https://x.org/a/b\nhttps://x.org/a/c max=many\n", "repos.txt:2: max='many' is not a number"),
    ("https://x.org/a/b max\n", "repos.txt:1: 'max' is not key=value"),
    ("# nothing\n\n", "repos.txt: names no repository"),
])
def test_a_bad_repos_file_is_one_clear_error(tmp_path: Path, text: str, message: str):
    listed = tmp_path / "repos.txt"
    listed.write_text(text)
    with pytest.raises(DatasetError) as raised:
        read_repos(listed)
    assert str(raised.value).startswith(f"{tmp_path}/{message}")


def _mine(listed: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["mine", "--repos", str(listed), "--out-dir", str(out), *extra])


def test_a_batch_reports_each_repository_and_resumes(tmp_path: Path):
    bare = _git_repo(tmp_path / "bare", {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n", "README.md": "hi\n"})
    listed = tmp_path / "repos.txt"
    listed.write_text(f"{bare} name=me/bare\n{tmp_path / 'missing'} name=me/missing\n")
    out = tmp_path / "out"
    result = _mine(listed, out)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert (report["repos"], report["done"], report["failed"], report["tasks"]) == (2, 1, 1, 0)
    bare_line, missing = report["per_repo"]
    assert bare_line["why"].startswith("the repository has no test files")
    assert missing["error"].startswith(f"{listed}:2: ") and "does not exist" in missing["error"]
    assert "fix the URL or path on that line" in missing["error"]
    assert {"stage": "screen", "cause": "no test change", "count": 1} in report["causes"]  # the root commit: 1
    assert (out / "me__bare.jsonl").is_file() and (out / "me__bare.jsonl.summary.json").is_file()
    assert "## Failed repositories" in (out / "report.md").read_text() and (out / "tasks.jsonl").is_file()
    state = (out / "batch.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in state] == ["done", "failed"]
    _git_repo(tmp_path / "missing", {"pkg/c.py": "z = 3\n"})  # it exists now: the rerun mines it, not bare again
    again = _mine(listed, out)
    assert again.exit_code == 0, again.output
    state = [json.loads(line) for line in (out / "batch.jsonl").read_text().splitlines()]
    assert [(r["stem"], r["status"]) for r in state[2:]] == [("me__missing", "done")]
    assert json.loads((out / "report.json").read_text())["done"] == 2


def test_repo_and_repos_together_is_one_clear_error(tmp_path: Path):
    result = CliRunner().invoke(app, ["mine", "--repo", str(tmp_path), "--repos", str(tmp_path / "r.txt")])
    assert result.exit_code != 0 and "give one of --repo (a repository) and --repos" in result.output


@pytest.mark.bwrap
@pytest.mark.slow
def test_a_real_batch_of_the_demo_history(tmp_path: Path):
    """The demo's history (more-itertools 10.5.0 and its fixes), a repository without tests and one
    that does not exist: validated instances of the first, why none of the second, one error line."""
    from sweworld.cli.demo.mine import build_history

    history = build_history(tmp_path / "history")
    bare = _git_repo(tmp_path / "bare", {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n"})
    listed = tmp_path / "repos.txt"
    listed.write_text(f"{history.root} name=more-itertools/more-itertools max=1\n{bare} name=me/bare\n"
                      "https://github.com/sweworld-no-such-owner/no-such-repo-zz.git\n")
    out = tmp_path / "out"
    result = _mine(listed, out, "--timeout", "300")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    mined, bare_line, missing = report["per_repo"]
    assert mined["validated"] == 1 == report["tasks"] and mined["status"] == "done"
    summary = json.loads((out / "more-itertools__more-itertools.jsonl.summary.json").read_text())
    assert summary["validated"] == 1 and summary["cpu_seconds"] > summary["screen_cpu_seconds"] > 0 and "this process" in summary["cpu_measure"]
    assert summary["validated_candidates"] + summary["validated_beyond_max"] <= 1 + 2 * 2  # window of 2 workers
    assert bare_line["why"].startswith("the repository has no test files")
    assert missing["status"] == "failed" and missing["error"].startswith(f"{listed}:3: ")
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert [t["instance_id"] for t in tasks] == ["more-itertools__more-itertools-903"]  # the newest fix
