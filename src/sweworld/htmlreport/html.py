"""Render a ``Report`` to one self-contained HTML page and write it with its JSON dump.

The page has inline CSS and inline SVG charts: no script, no network, no external fonts (a
Content-Security-Policy meta tag forbids fetching anything). All report text is escaped by
jinja2's autoescape; the charts are built by ``svg.render_bar_chart``, which escapes its own text.
"""

from __future__ import annotations

import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from sweworld import __version__
from sweworld.htmlreport.model import Cell, Report, Section
from sweworld.htmlreport.svg import render_bar_chart

TEMPLATES = Path(__file__).parent / "templates"
HTML_FILE = "index.html"
JSON_FILE = "report.json"


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def format_cell(cell: Cell) -> tuple[str, str]:
    """A table cell's text and CSS class: yes/no for booleans, an em dash for None, numbers as is."""
    if cell is None:
        return "—", "none"
    if isinstance(cell, bool):
        return ("yes", "yes") if cell else ("no", "no")
    if isinstance(cell, int):
        return str(cell), "num"
    if isinstance(cell, float):
        return str(round(cell, 4)), "num"
    return cell, ""


def _section_view(section: Section) -> dict[str, Any]:
    return {
        "title": section.title,
        "text": section.text,
        "svg": Markup(render_bar_chart(section.chart)) if section.chart is not None else None,
        "table": section.table,
        "rows": [[format_cell(c) for c in row] for row in section.table.rows] if section.table else [],
    }


def render_html(report: Report) -> str:
    """The report as one HTML document (deterministic: the same report gives the same text)."""
    template = _environment().get_template("report.html.j2")
    return template.render(report=report, sections=[_section_view(s) for s in report.sections],
                           version=__version__)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a report is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_html(out_dir: str | Path, report: Report) -> Path:
    """Write ``out_dir/report.json`` (the model, indented) then ``out_dir/index.html``, each through a
    temporary file and a rename; creates ``out_dir``. Returns the path of ``index.html``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(out / JSON_FILE, report.model_dump_json(indent=2) + "\n")
    html_path = out / HTML_FILE
    _write_atomic(html_path, render_html(report))
    return html_path


def read_report(out_dir: str | Path) -> Report:
    """Load the ``Report`` that ``write_html`` dumped in ``out_dir`` (or a report.json path)."""
    path = Path(out_dir)
    if path.is_dir():
        path = path / JSON_FILE
    return Report.model_validate_json(path.read_text(encoding="utf-8"))
