"""The demo's embedded SWR on real-agent-style patches of the mined instances.

The mining step leaves real instances (a fix from a history, with the tests it added). For each,
``agent_style(task, read)`` writes the patches agents write besides the gold one: the gold patch
with a comment of its own (resolves, differs as text), only a reproduction script (the scratch
file agents add; nothing executable), an edit beside the bug that keeps it, the gold patch's first
hunk alone (a partial fix, where the gold patch has several), and the gold change written as tools
that edit by search/replace write it (Agentless: a plain diff, no ``diff --git``, whose one hunk
replaces the whole block around the change and says it starts at line 1; ``git apply`` refuses it,
the harness's ``patch --fuzz`` applies it). Each is evaluated for real (the
label) and by the embedded SWR (the shipped model for real instances, base files read through
git's objects of the mined repository): per kind, how many resolve for real and how many the
embedded SWR says resolve, with accuracy and AUC over all.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from unidiff import PatchSet

from sweworld.core.types import Task
from sweworld.synth import file_diff

Read = Callable[[str], "str | None"]


def search_replace_diff(path: str, base: str, fixed: str, *, around: int = 2) -> str:
    """The change from ``base`` to ``fixed`` as one plain hunk said to start at line 1 that replaces
    the lines from ``around`` before the first changed line to ``around`` after the last."""
    old, new = base.splitlines(keepends=True), fixed.splitlines(keepends=True)
    changed = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
    start = max(changed[0][1] - around, 0)  # the lines before the first change are the same in both
    tail = min(len(old) - changed[-1][2], around)
    removed, added = old[start:changed[-1][2] + tail], new[start:changed[-1][4] + tail]
    lines = [f"-{line}" for line in removed] + [f"+{line}" for line in added]
    body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,{len(removed)} +1,{len(added)} @@\n{body}"


def agent_style(task: Task, read: Read) -> dict[str, str]:
    """The patches of the module docstring, by kind (the gold and empty patches included)."""
    from sweworld.surrogates.swr.patched import apply_patch_text

    gold = apply_patch_text(task.patch, read)
    path = next(p for p in gold.paths if p.endswith(".py") and gold.after.get(p) and gold.base.get(p))
    base, fixed = gold.base[path] or "", gold.after[path] or ""
    out = {"gold": task.patch, "empty": "",
           "gold + own comment": file_diff(path, base, "# checked against the issue\n" + fixed),
           "reproduction script only": file_diff("reproduce_issue.py", "", "print('reproducing')\n"),
           "edit beside the bug": file_diff(path, base, base + "\n\ndef _unused_helper():\n    return None\n"),
           "gold as a search/replace diff": search_replace_diff(path, base, fixed)}
    files = PatchSet(task.patch)
    if sum(len(f) for f in files) > 1:
        first = files[0]
        out["first hunk only"] = f"diff --git a/{first.path} b/{first.path}\n--- a/{first.path}\n+++ b/{first.path}\n{first[0]}"
    return out


def swr_on_mined(run, tasks: list[Task], repo) -> tuple[list[list], dict]:
    """Rows (kind, n, resolved for real, predicted resolved, agreeing) and the pooled figures of
    the embedded SWR on ``tasks``' agent-style patches (``repo``: the mined repository)."""
    from sweworld.backends.real import RealBackend
    from sweworld.core.config import EvalConfig, RunnerConfig
    from sweworld.harness.predictions import Prediction
    from sweworld.repos.blobs import GitBlobs
    from sweworld.runs.eval import evaluate_run
    from sweworld.surrogates.swr.swr import EmbeddedSWR
    from sweworld.world.metrics import scored

    blobs = GitBlobs(repo)
    swr = EmbeddedSWR(sources=lambda t: blobs.source(t.base_commit))
    patches = {t.instance_id: agent_style(t, blobs.source(t.base_commit)) for t in tasks}
    kinds = list(dict.fromkeys(k for p in patches.values() for k in p))
    rows, pairs = [], []
    for kind in kinds:
        chosen = [t for t in tasks if kind in patches[t.instance_id]]
        preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path=kind,
                                           model_patch=patches[t.instance_id][kind]) for t in chosen}
        settings = EvalConfig(run_id="demo-swr", logs_dir=run.out / "mine" / "swr-logs", out=run.out / "mine" / "swr",
                              force=True, runner=RunnerConfig(workers=run.workers))
        summary, _ = evaluate_run(chosen, preds, settings, model=kind.replace(" ", "-"), backend=RealBackend(run.builder))
        real = set(summary["resolved_ids"])
        found = []
        for t in chosen:
            patch = patches[t.instance_id][kind]
            p = swr.report(t, patch, swr.sources(t)).sim_probability if patch.strip() else 0.0
            found.append((p or 0.0, t.instance_id in real))
        threshold = swr.real_model.threshold
        pairs += found
        rows.append([kind, len(chosen), len(real), sum(p >= threshold for p, _ in found),
                     sum((p >= threshold) == r for p, r in found)])
    blobs.close()
    return rows, scored(pairs, swr.real_model.threshold)
