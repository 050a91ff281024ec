"""``mine_repository``: the whole run behind ``sweworld mine``, as a library call.

Writes three files: ``OUT`` (the validated instances, SWE-bench rows), ``OUT.summary.json`` (what
was looked at, what was kept, every drop by reason, the causes grouped, why nothing was kept when
nothing was, time and the run's own CPU) and ``OUT.mine.jsonl`` (the ledger a rerun resumes from).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweworld.mine.candidates import screen
from sweworld.mine.exclude import Excluded, load_excluded
from sweworld.mine.ledger import Ledger
from sweworld.mine.pipeline import MineOptions, MineResult, validate_candidates
from sweworld.mine.report import causes, why_none
from sweworld.mine.repository import open_repository, steps
from sweworld.parallel.runner import Runner
from sweworld.repos import RepoStore
from sweworld.synth.stats import own_cpu_seconds
from sweworld.tasks import save_tasks


def output_paths(out: Path) -> tuple[Path, Path]:
    """(summary, ledger) beside ``out``."""
    return out.with_name(out.name + ".summary.json"), out.with_name(out.name + ".mine.jsonl")


def mine_repository(repo: str, out: Path, options: MineOptions, *, backend: Any, repos: RepoStore,
                    name: str | None = None, runner: Runner | None = None,
                    on_stage: Callable[[str, int], None] | None = None, on_step: Callable[[], None] | None = None,
                    on_entry: Callable[[dict[str, Any]], None] | None = None,
                    excluded: list[Excluded] | None = None) -> tuple[MineResult, dict[str, Any]]:
    """Mine ``repo`` (``--repo``'s text) into ``out``; ``backend`` validates (a real backend over ``repos``);
    ``excluded``: the datasets already loaded (default: ``options.exclude``'s, read here)."""
    from sweworld.envs.discovery import list_interpreters

    cpu0 = own_cpu_seconds()
    if excluded is None:
        excluded = load_excluded(options.exclude) if options.exclude else []
    source, label, mirror = open_repository(repo, repos, name)
    history = steps(mirror, rev=options.rev, since=options.since, until=options.until, commits=options.commits)
    if on_stage:
        on_stage(f"screen {label}", len(history))
    screened = screen(history, mirror=mirror, repo=label, source=source.describe(), limits=options.limits,
                      tree_of=lambda sha: repos.tree(label, sha, source),
                      available_pythons=[i.version for i in list_interpreters()], on_step=on_step,
                      excluded=excluded, model_statements=options.model is not None)
    if options.setup_model is not None:
        from sweworld.mine.agent_lines import fix_lines

        if on_stage:
            on_stage(f"set up {label}", len(screened.versions))
        fix_lines(screened, backend, options.setup_model, timeout=options.timeout, attempts=options.setup_attempts)
    if on_stage:
        on_stage(f"validate {label}", min(len(screened.candidates), options.max_candidates or 10**9))
    summary_path, ledger_path = output_paths(out)
    before = round(own_cpu_seconds() - cpu0, 1)  # the mirror, the screen, the set-up agent
    result = validate_candidates(screened, backend, options, ledger=Ledger(ledger_path), runner=runner,
                                 on_entry=on_entry)
    save_tasks(result.instances, out)
    summary = result.summary(repo=label, source=source.describe(), rev=options.rev, since=options.since,
                             until=options.until, commits=options.commits, out=str(out),
                             exclude={e.name: {"rows": len(e.instance_ids), "excluded": sum(
                                 r.startswith("excluded: ") and r.endswith(f" in {e.name}")
                                 for r in screened.skipped.values())} for e in excluded})
    if result.cpu_seconds is not None:  # the whole run's own CPU: validation's and what came before it
        summary.update(screen_cpu_seconds=before, cpu_seconds=round(before + result.cpu_seconds, 1),
                       validated_per_cpu_hour=round(summary["validated"] * 3600 / (before + result.cpu_seconds), 1)
                       if before + result.cpu_seconds else None)
    summary["why"] = why_none(screened, result.entries, mirror=mirror, rev=options.rev)
    summary["causes"] = causes(screened, result.entries)
    summary["drops"] = [{k: e[k] for k in ("instance_id", "commit", "drop", "reason")}
                        for e in result.entries if not e["kept"]]
    summary["beyond_max"] = [{k: e[k] for k in ("instance_id", "commit", "kept", "drop")} for e in result.beyond]
    summary_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return result, summary
