"""What ``sweworld mine`` and ``sweworld mine --repos`` share: the options of a run and its live view."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sweworld.cli import common
from sweworld.core.config import MineConfig
from sweworld.mine.rules import MAX_PATCH_LINES, MAX_TEST_PATCH_LINES


def _model(url: str | None, name: str | None, api_key_env: str):
    if not url:
        return None
    from sweworld.models.base import ModelConfig
    from sweworld.models.openai import OpenAIChatModel

    return OpenAIChatModel(ModelConfig(url=url, model=name or "default", api_key_env=api_key_env, temperature=0.2,
                                       max_tokens=1024))


def mine_options(run: MineConfig):
    from sweworld.mine.pipeline import MineOptions
    from sweworld.mine.rules import Limits

    return MineOptions(rev=run.rev, since=run.since, until=run.until, commits=run.commits,
                       max_instances=run.max_instances, max_candidates=run.max_candidates,
                       workers=run.runner.workers, timeout=run.timeouts.evaluation,
                       limits=Limits(run.max_patch_lines or MAX_PATCH_LINES,
                                     run.max_test_patch_lines or MAX_TEST_PATCH_LINES),
                       model=_model(run.model_url, run.model, run.api_key_env), exclude=list(run.exclude or []),
                       setup_model=_model(run.setup_model_url, run.setup_model, run.api_key_env),
                       setup_attempts=run.setup_attempts)


def progress() -> Progress:
    """The live view of a mining run (on stderr)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("{task.fields[note]}"), console=common.err)


class Bars:
    """The bar of the repository being mined: its stage (screen, validate), the count validated."""

    def __init__(self, view: Progress):
        self.view, self.validated = view, 0
        self.bar = view.add_task("mine", total=None, note="validated 0")

    def stage(self, what: str, total: int) -> None:
        self.view.update(self.bar, description=what, total=total, completed=0)

    def step(self) -> None:
        self.view.advance(self.bar)

    def entry(self, entry: dict) -> None:
        self.validated += bool(entry["kept"])
        self.view.update(self.bar, advance=1, note=f"validated {self.validated}")
