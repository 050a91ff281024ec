"""``sweworld mine`` on a JavaScript history, end to end: @fastify/accept-negotiator 2.1.2 as the npm
registry publishes it (its tests use ``node:test``; its dev dependencies cut to the one its tests
import, ``@matteo.collina/tspl``), then a regression without a test, then its fix with a new test in
the real test file. The real CLI mines it (node and npm found on PATH, the dependencies installed
by npm in the sandbox as of the history's date, TAP parsed by swebench's ``parse_log_tap``), keeps
the fix with FAIL_TO_PASS naming the real tests, and ``sweworld eval`` resolves its gold patch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oci_lang_images import JS_BAD, JS_FILE, JS_GOOD, JS_PACKAGE, JS_VERSION, _unpack_npm, npm_tarball
from sweworld.cli.app import app
from sweworld.cli.demo.mine import History
from sweworld.tasks import load_tasks, save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

NAME = "fastify/accept-negotiator"
TIE_TEST = """
test('ties between equal qualities go to the first supported encoding', t => {
  const { strictEqual } = tspl(t, { plan: 1 })
  strictEqual(negotiate('deflate;q=0.5, gzip;q=0.5', ['gzip', 'deflate']), 'gzip')
})
"""


class DatedHistory(History):
    """The demo's history writer, dated after the release (so that npm resolves as of then)."""

    def git(self, *args: str) -> str:
        from sweworld.repos.git import git

        stamp = f"2026-11-{1 + self.day:02d}T12:00:00+00:00"
        who = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.org", "GIT_COMMITTER_NAME": "Dev",
               "GIT_COMMITTER_EMAIL": "dev@example.org"}
        return git(*args, cwd=self.root, env={**who, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


def build_js_history(root: Path) -> DatedHistory:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: the JavaScript environment needs it")
    shutil.rmtree(root, ignore_errors=True)
    _unpack_npm(npm_tarball(JS_PACKAGE, JS_VERSION), root)
    package = json.loads((root / "package.json").read_text())
    package["devDependencies"] = {"@matteo.collina/tspl": package["devDependencies"]["@matteo.collina/tspl"]}
    (root / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    history = DatedHistory(root)
    history.git("init", "-q", "-b", "main")
    history.commit(f"Import {JS_PACKAGE} {JS_VERSION}")
    history.edit(JS_FILE, JS_GOOD, JS_BAD)
    history.commit("Prefer the later encoding when qualities tie")
    history.edit(JS_FILE, JS_BAD, JS_GOOD)
    (root / "test" / "negotiate.test.js").write_text((root / "test" / "negotiate.test.js").read_text() + TIE_TEST)
    history.commit("Fix negotiate() breaking ties the wrong way (#42)\n\nThe later encoding won a tie.")
    return history


@pytest.fixture(scope="module")
def mined(tmp_path_factory) -> tuple[Path, dict, list]:
    root = tmp_path_factory.mktemp("minejs")
    history = build_js_history(root / "history")
    out = root / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history.root), "--out", str(out), "--name", NAME,
                                      "--timeout", "300"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    return out, summary, list(load_tasks(out))


def test_the_fix_is_mined_with_the_real_tests(mined):
    _out, summary, tasks = mined
    assert summary["steps"] == 3 and summary["candidates"] == 1, summary
    assert summary["dropped"] == {"root commit": 1, "no test change": 1}, summary
    (task,) = tasks
    assert task.instance_id == "fastify__accept-negotiator-42" and task.version == "2.1"
    assert "index.js" in task.patch and task.test_patch.startswith("diff --git a/test/negotiate.test.js")
    assert "- ties between equal qualities go to the first supported encoding" in task.FAIL_TO_PASS
    assert "- should return gzip when deflate;q=0.5, gzip;q=0.5 and gzip,deflate" in task.FAIL_TO_PASS
    assert "- should return identity when identity;q=1 and gzip,identity" in task.PASS_TO_PASS
    extra = task.model_extra
    assert extra["language"] == "javascript" and extra["recipe_source"] == "inferred"
    assert extra["install_config"]["log_parser"] == "parse_log_tap"
    assert extra["install_config"]["test_cmd"] == "node --test --test-reporter=tap"
    assert extra["install_config"]["install"].startswith("npm install --before=2026-11-")


def test_the_gold_patch_resolves(mined, tmp_path):
    _out, _summary, tasks = mined
    dataset = tmp_path / "js.jsonl"
    save_tasks(tasks, dataset)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": t.instance_id, "model_name_or_path": "gold",
                                         "model_patch": t.patch}) + "\n" for t in tasks))
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--predictions", str(preds), "--run-id", "js",
                                      "--out", str(tmp_path / "eval"), "--logs-dir", str(tmp_path / "logs")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "eval" / "gold.js.json").read_text())
    assert report["resolved_instances"] == 1, report


def test_webassembly_runs_in_a_javascript_episode(mined):
    """V8 reserves about 10 GiB of address space for a WebAssembly memory: a JavaScript episode's
    RLIMIT_AS leaves room for it (vitest's toolchain needs it; the default 8 GiB refused it)."""
    from sweworld.backends.real import RealBackend

    _out, _summary, tasks = mined
    with RealBackend().open(tasks[0]) as sb:
        result = sb.run("node -e 'new WebAssembly.Memory({initial: 1}); console.log(\"wasm ok\")'", timeout=60)
    assert result.exit_code == 0 and "wasm ok" in result.output, result.output
