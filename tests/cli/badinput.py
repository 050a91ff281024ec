"""Inputs for the hostile- and broken-input tests of the command line: small SWE-bench rows whose
instances fail fast and offline (their repository source does not exist), and one way to invoke
the real ``sweworld`` app in process."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sweworld.cli.app import app

PATCH = "diff --git a/x b/x\n"


def row(instance_id: str, source: str, **extra) -> dict:
    """A SWE-bench row with a non-empty gold patch whose repository comes from ``source``."""
    return {"instance_id": instance_id, "repo": "org/repo", "base_commit": "0" * 40, "patch": PATCH,
            "test_patch": "", "problem_statement": "bug", "version": "1", "FAIL_TO_PASS": [],
            "PASS_TO_PASS": [], "repo_source": source, **extra}


def missing_source(tmp_path: Path) -> str:
    """A repository source that does not exist: cloning it fails at once, with no network."""
    return f"file://{tmp_path}/no-such-repo.git"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def dataset(tmp_path: Path, *ids: str) -> Path:
    """``tmp_path/data.jsonl`` with one unreachable-repository row per id (default: one row)."""
    source = missing_source(tmp_path)
    return write_jsonl(tmp_path / "data.jsonl", [row(i, source) for i in ids or ("org__repo-1",)])


def invoke(*args, env: dict[str, str] | None = None):
    """The real ``sweworld`` app on ``args``; stdout and stderr are both in ``result.output``."""
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def flat(result) -> str:
    """The output as one line of single spaces, without rich's box borders (its wrapping varies)."""
    return " ".join(result.output.replace("│", " ").split())
