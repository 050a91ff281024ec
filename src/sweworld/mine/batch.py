"""``sweworld mine --repos FILE --out-dir DIR``: many repositories mined in one run.

``FILE`` is a text file, one repository a line (a git URL, a local clone or a bare mirror), ``#``
comments and blank lines skipped, each optionally followed by ``key=value`` overrides of the run's
options for that repository: ``name=owner/repo``, ``since=``, ``until=``, ``rev=``, ``max=``,
``max_candidates=``; or a ``.jsonl``/``.json`` dataset of repositories whose rows name one in a
``repo`` or ``url`` field (``owner/name`` alone is GitHub's), with the same overrides as fields. The
same repository twice is mined once.

``DIR`` holds, per repository, what ``sweworld mine --repo`` writes (``OWNER__NAME.jsonl``, its
``.summary.json`` and its ledger ``.mine.jsonl``), and for the whole run ``tasks.jsonl`` (every
instance, each once), ``report.json``/``report.md`` (``mine.report``: yield per repository and per
cause, one line per repository that failed) and ``batch.jsonl``, the state a rerun resumes from: a
repository recorded done is not mined again (delete its line to mine it again), one that failed is
tried again, and the one a killed run was mining resumes from its ledger.

A repository that fails (its URL does not exist, its path is no git repository, the clone fails, its
history has no commit in the window) is one line in the report and the run goes on; nothing already
mined is lost. Instances are deduplicated against the ``--exclude`` datasets (loaded once) and
against those the other repositories of the directory already gave (``mine.exclude``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError, RepoError, SWEWorldError
from sweworld.mine.exclude import Excluded, load_excluded
from sweworld.mine.pipeline import MineOptions
from sweworld.mine.report import write_report
from sweworld.mine.repository import repo_name
from sweworld.repos import RepoSource
from sweworld.tasks import load_tasks, save_tasks

OVERRIDES = {"since": str, "until": str, "rev": str, "max": int, "max_candidates": int}
"""Per-repository options of a repos file, and their types."""
STATE = "batch.jsonl"
TASKS = "tasks.jsonl"
_GITHUB_NAME = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass
class RepoSpec:
    """One repository of a repos file."""

    source: str
    """A git URL, a local clone or a bare mirror."""
    where: str
    """file:line of it."""
    name: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def repo(self) -> str:
        """``owner/name`` (``name=``, else read from the URL or the clone's origin)."""
        if self.name:
            return self.name
        try:
            return repo_name(RepoSource.parse(self.source))
        except SWEWorldError:  # no such path: mining it fails, with the error in the report
            return Path(self.source.rstrip("/")).name.removesuffix(".git") or "repo"

    @property
    def stem(self) -> str:
        """The file names of its outputs: ``OWNER__NAME``."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.repo.replace("/", "__"))

    def options(self, base: MineOptions) -> MineOptions:
        named = {"max": "max_instances"}
        return replace(base, **{named.get(k, k): v for k, v in self.overrides.items()})


def _spec(fields: dict[str, Any], where: str) -> RepoSpec:
    """A ``RepoSpec`` of one line's or row's fields (``DatasetError`` naming ``where`` when bad)."""
    source = fields.pop("repo", None) or fields.pop("url", None) or fields.pop("source", None)
    if not isinstance(source, str) or not source.strip():
        raise DatasetError("names no repository", where=where, hint="give a git URL or a path (a `repo` or `url` field)")
    if _GITHUB_NAME.match(source) and not Path(source).exists():
        fields.setdefault("name", source)
        source = f"https://github.com/{source}"
    name = fields.pop("name", None)
    overrides = {}
    for key, value in fields.items():
        kind = OVERRIDES.get(key)
        if kind is None:
            raise DatasetError(f"unknown option {key!r}", where=where,
                               hint=f"use name=owner/repo or one of {', '.join(OVERRIDES)}")
        try:
            overrides[key] = kind(value)
        except (TypeError, ValueError):
            raise DatasetError(f"{key}={value!r} is not {'a number' if kind is int else 'text'}", where=where,
                               hint=f"e.g. {key}=5" if kind is int else None) from None
    return RepoSpec(source=source.strip(), where=where, name=name, overrides=overrides)


def _text_fields(line: str, where: str) -> dict[str, Any]:
    source, *rest = line.split()
    fields: dict[str, Any] = {"repo": source}
    for token in rest:
        key, sep, value = token.partition("=")
        if not sep:
            raise DatasetError(f"{token!r} is not key=value", where=where,
                               hint="one repository a line, then options such as name=owner/repo max=5")
        fields[key] = value
    return fields


def _rows(path: Path) -> list[tuple[dict[str, Any], str]]:
    """(fields, file:line) of each repository of ``path``."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"not JSON: {exc.msg}", where=f"{path}:{exc.lineno}") from None
        rows = data.get("repos", []) if isinstance(data, dict) else data
        return [(dict(r) if isinstance(r, dict) else {"repo": r}, f"{path}: item {i}") for i, r in enumerate(rows)]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        where, line = f"{path}:{number}", line.split("#", 1)[0].strip() if path.suffix != ".jsonl" else line.strip()
        if not line:
            continue
        if path.suffix != ".jsonl":
            out.append((_text_fields(line, where), where))
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"not JSON: {exc.msg}", where=where) from None
        out.append((dict(row) if isinstance(row, dict) else {"repo": row}, where))
    return out


def _same(source: str) -> str:
    """What two spellings of one repository share: a path resolved, a URL without ``.git`` and case."""
    if "://" in source or source.startswith("git@"):
        return source.lower().rstrip("/").removesuffix(".git")
    return str(Path(source).expanduser().resolve())


def read_repos(path: Path) -> list[RepoSpec]:
    """The repositories of a repos file (see the module docstring), each once (the first line of it)."""
    if not path.is_file():
        raise DatasetError("no such file", where=str(path), hint="give a text file with one repository a line")
    seen: dict[str, RepoSpec] = {}
    sources: set[str] = set()
    for fields, where in _rows(path):
        fields = {k: v for k, v in fields.items() if k in ("repo", "url", "source", "name", *OVERRIDES)} \
            if path.suffix in (".json", ".jsonl") else fields
        spec = _spec(fields, where)
        if spec.stem not in seen and _same(spec.source) not in sources:
            seen[spec.stem] = spec
            sources.add(_same(spec.source))
    if not seen:
        raise DatasetError("names no repository", where=str(path), hint="one git URL or path a line")
    return list(seen.values())


@dataclass
class BatchView:
    """What a live view is told: each repository as it starts (index, spec) and is over (its record),
    and the single-repository callbacks of ``mine_repository``."""

    on_repo: Callable[[int, RepoSpec], None] | None = None
    on_record: Callable[[dict[str, Any]], None] | None = None
    on_stage: Callable[[str, int], None] | None = None
    on_step: Callable[[], None] | None = None
    on_entry: Callable[[dict[str, Any]], None] | None = None


def read_state(out_dir: Path) -> dict[str, dict[str, Any]]:
    """stem -> the last record of it in ``batch.jsonl`` (a killed run's cut last line skipped)."""
    found: dict[str, dict[str, Any]] = {}
    path = out_dir / STATE
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "stem" in record:
                found[record["stem"]] = record
    return found


def _append_state(out_dir: Path, record: dict[str, Any]) -> None:
    with (out_dir / STATE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


REPO_HINT = ("fix the URL or path on that line (a git URL, a local clone or a bare mirror) or remove the line; "
             "a rerun tries it again")


def _error_line(exc: Exception, spec: RepoSpec) -> str:
    """One line: where in the repos file, what failed, and what to do."""
    if isinstance(exc, SWEWorldError):
        text = exc.message.splitlines()[0]
        hint = REPO_HINT if isinstance(exc, RepoError) else (exc.hint or "").splitlines()[:1]
        hint = hint if isinstance(hint, str) else "".join(hint)
        return f"{spec.where}: {text}" + (f"; what to do: {hint}" if hint else "")
    first = (str(exc) or "").splitlines()
    return f"{spec.where}: {type(exc).__name__}: {first[0] if first else ''}"


def _mined(out_dir: Path, stems: list[str]) -> list[Any]:
    """The instances the repositories ``stems`` gave so far (their outputs in ``out_dir``)."""
    tasks = []
    for stem in stems:
        path = out_dir / f"{stem}.jsonl"
        if path.is_file():
            tasks.extend(load_tasks(str(path)))
    return tasks


def _write_tasks(out_dir: Path, specs: list[RepoSpec]) -> int:
    """``tasks.jsonl``: every repository's instances, each instance id once; how many."""
    unique = {t.instance_id: t for t in reversed(_mined(out_dir, [s.stem for s in specs]))}
    tasks = list(reversed(unique.values()))
    save_tasks(tasks, out_dir / TASKS)
    return len(tasks)


def _mine_one(spec: RepoSpec, out_dir: Path, options: MineOptions, excluded: list[Excluded],
              view: BatchView, **run: Any) -> dict[str, Any]:
    """Mine one repository of a batch into ``out_dir``; its record (done, or failed with one line)."""
    from sweworld.mine.run import mine_repository

    out = out_dir / f"{spec.stem}.jsonl"
    record: dict[str, Any] = {"stem": spec.stem, "repo": spec.repo, "source": spec.source, "where": spec.where,
                              "out": out.name}
    try:
        _result, summary = mine_repository(spec.source, out, spec.options(options), name=spec.name,
                                           excluded=excluded, on_stage=view.on_stage, on_step=view.on_step,
                                           on_entry=view.on_entry, **run)
    except Exception as exc:  # one repository's failure is a line of the report; the run goes on
        return {**record, "status": "failed", "error": _error_line(exc, spec)}
    keep = ("repo", "steps", "candidates", "validated_candidates", "validated", "validated_beyond_max", "resumed",
            "seconds", "cpu_seconds", "validated_per_cpu_hour", "why", "causes", "dropped")
    return {**record, "repo": summary["repo"], "status": "done", "summary": {k: summary.get(k) for k in keep}}


def mine_batch(specs: list[RepoSpec], out_dir: Path, options: MineOptions, *, backend: Any, repos: Any,
               runner: Any = None, view: BatchView | None = None) -> dict[str, Any]:
    """Mine ``specs`` one after the other into ``out_dir`` (see the module docstring); the report."""
    view = view or BatchView()
    out_dir.mkdir(parents=True, exist_ok=True)
    state = read_state(out_dir)
    excluded = load_excluded(options.exclude) if options.exclude else []
    records: list[dict[str, Any]] = []
    report: dict[str, Any] = {}
    for index, spec in enumerate(specs):
        if view.on_repo:
            view.on_repo(index, spec)
        record = state.get(spec.stem)
        if record is None or record.get("status") != "done":
            others = Excluded.of("instances mined in this directory",
                                 _mined(out_dir, [s.stem for s in specs if s.stem != spec.stem]))
            record = _mine_one(spec, out_dir, options, [*excluded, others], view, backend=backend, repos=repos,
                               runner=runner)
            _append_state(out_dir, record)
        records.append(record)
        if view.on_record:
            view.on_record(record)
        report = write_report(out_dir, records, tasks=_write_tasks(out_dir, specs), tasks_file=out_dir / TASKS)
    return report
