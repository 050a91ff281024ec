"""The report as data: a pydantic tree that ``write_html`` renders to HTML and dumps to JSON.

Sections are generic (a paragraph, an optional table, an optional bar chart), so new kinds of
results (world fidelity, best-of-n) add sections without touching the renderer.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field, model_validator

Cell = bool | int | float | str | None
"""A table cell: numbers are right-aligned, booleans shown as yes/no, None as an em dash."""


class Table(BaseModel):
    """A table: column headers and rows of cells (each row as long as ``columns``)."""

    columns: list[str]
    rows: list[list[Cell]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_widths(self) -> Table:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} cells, the table has {len(self.columns)} columns")
        return self


class BarChart(BaseModel):
    """A grouped bar chart: one group per category, one bar per series in each group.

    A series shorter than ``categories`` is padded with None; None, NaN and infinities are
    missing values (no bar, ``n/a`` label). ``y_max`` None picks a rounded maximum from the data;
    ``percent`` shows values in [0, 1] as percentages.
    """

    title: str = ""
    categories: list[str] = Field(default_factory=list)
    series: dict[str, list[float | None]] = Field(default_factory=dict)
    y_label: str = ""
    y_max: float | None = Field(default=None, gt=0)
    percent: bool = False

    @model_validator(mode="after")
    def _pad_series(self) -> BarChart:
        n = len(self.categories)
        for name, values in self.series.items():
            if len(values) > n:
                raise ValueError(f"series {name!r} has {len(values)} values for {n} categories")
            cleaned = [v if v is not None and math.isfinite(v) else None for v in values]
            self.series[name] = cleaned + [None] * (n - len(values))
        return self


class Section(BaseModel):
    """A titled part of the report: a short paragraph, then an optional chart and table."""

    title: str
    text: str = ""
    table: Table | None = None
    chart: BarChart | None = None


class Report(BaseModel):
    """A whole report: a title, a subtitle, metadata (dataset, date, machine, duration...), sections."""

    title: str
    subtitle: str = ""
    meta: dict[str, str] = Field(default_factory=dict)
    sections: list[Section] = Field(default_factory=list)
