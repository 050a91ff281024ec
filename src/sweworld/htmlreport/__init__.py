"""HTML reports of runs: a pydantic ``Report`` of sections (text, table, grouped bar chart), rendered
to one self-contained page (inline CSS and SVG, no script, no network) plus its JSON dump.

    report = Report(title="sweworld demo", meta={"dataset": "default"},
                    sections=[evaluation_section(eval_summaries), rollout_section(rollout_summaries)])
    write_html("runs/demo/report", report)   # -> runs/demo/report/index.html, report.json
"""

from sweworld.htmlreport.html import format_cell, read_report, render_html, write_html
from sweworld.htmlreport.model import BarChart, Cell, Report, Section, Table
from sweworld.htmlreport.sections import evaluation_section, instances_section, rollout_section
from sweworld.htmlreport.svg import nice_max, render_bar_chart

__all__ = [
    "BarChart",
    "Cell",
    "Report",
    "Section",
    "Table",
    "evaluation_section",
    "format_cell",
    "instances_section",
    "nice_max",
    "read_report",
    "render_bar_chart",
    "render_html",
    "rollout_section",
    "write_html",
]
