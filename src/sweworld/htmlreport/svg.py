"""Grouped bar charts as inline SVG, drawn by hand (no plotting library, no script, no fonts to fetch).

The output is a pure function of the chart: the same ``BarChart`` always gives the same bytes.
Every bar is a ``<rect class="bar" data-series=... data-category=...>`` with a ``<title>`` tooltip.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from sweworld.htmlreport.model import BarChart

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
CHAR_W = 0.6  # average glyph width, in font sizes
MAX_LABEL = 28  # category labels longer than this are clipped (the full text stays in the tooltip)


def nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= ``value`` (1.0 for <= 0)."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * (1 - 1e-12):
            return round(step * power, 12)
    return 10.0 * power  # pragma: no cover - the loop always returns


def ticks(y_max: float) -> list[float]:
    """Gridline values from 0 to ``y_max``: a round step, between 3 and 7 lines."""
    step = nice_max(y_max / 6)
    return [round(k * step, 10) for k in range(int(y_max / step + 1e-9) + 1)]


def _trim(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def format_value(value: float, percent: bool = False) -> str:
    """A bar or tick label: ``50%``/``12.5%`` for percentages, else a few significant decimals."""
    if percent:
        return _trim(value * 100, 1) + "%"
    size = abs(value)
    return _trim(value, 0 if size >= 100 else 1 if size >= 10 else 3)


def _n(x: float) -> str:
    return _trim(x, 2)


def _attr(text: str) -> str:
    return escape(text, {'"': "&quot;"})


def _clip(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def _text(x: float, y: float, text: str, *, size: int = 11, anchor: str = "middle", rotate: int = 0,
          cls: str = "", fill: str = "#374151", weight: str = "") -> str:
    extra = f' transform="rotate({rotate} {_n(x)} {_n(y)})"' if rotate else ""
    extra += f' class="{cls}"' if cls else ""
    extra += f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{escape(text)}</text>")


def _open(width: float, height: float, title: str) -> list[str]:
    label = _attr(title or "bar chart")
    return [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{label}" '
            f'width="{_n(width)}" height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" '
            f'font-family="{_attr(FONT)}">']


def _empty(chart: BarChart) -> str:
    top = 30 if chart.title else 0
    parts = _open(360, top + 80, chart.title)
    if chart.title:
        parts.append(_text(180, 20, chart.title, size=14, cls="chart-title", weight="600"))
    parts.append(f'<rect class="frame" x="0.5" y="{top + 0.5}" width="359" height="79" fill="none" stroke="#d1d5db"/>')
    parts.append(_text(180, top + 44, "no data", size=12, cls="no-data", fill="#6b7280"))
    return "\n".join([*parts, "</svg>"])


def _legend_item_width(name: str) -> float:
    return 16 + len(name) * 11 * CHAR_W + 18


def _legend(names: list[str], x0: float, y0: float, right: float) -> tuple[list[str], float]:
    """Legend items flowed left to right, wrapping at ``right``; returns the parts and their height."""
    parts, x, y = [], x0, y0
    for i, name in enumerate(names):
        width = _legend_item_width(name)
        if x > x0 and x + width > right:
            x, y = x0, y + 18
        parts.append(f'<rect class="swatch" x="{_n(x)}" y="{_n(y)}" width="10" height="10" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(_text(x + 15, y + 9, name, anchor="start", cls="legend"))
        x += width
    return parts, y + 18 - y0


def render_bar_chart(chart: BarChart) -> str:
    """The chart as a standalone ``<svg>`` element (well-formed XML, also valid inline in HTML)."""
    cats, names = chart.categories, list(chart.series)
    if not cats or not names:
        return _empty(chart)
    found = [v for values in chart.series.values() for v in values if v is not None]
    y_max = chart.y_max or nice_max(max(found, default=0.0))
    n_c, n_s = len(cats), len(names)
    legend_w = sum(_legend_item_width(name) for name in names)
    plot_w = min(1040.0, max(360.0, legend_w, n_c * (n_s * 24.0 + 20.0)))
    group_w = plot_w / n_c
    bar_w = min(group_w * 0.8 / n_s, 72.0)
    value_size = 10 if bar_w >= 12 else 8
    labels = [_clip(c) for c in cats]
    longest = max(len(label) for label in labels) * 11 * CHAR_W
    tilt = longest > group_w - 6
    upright = bar_w < 30  # narrow bars get their value labels turned upright
    left = 58.0 + (18.0 if chart.y_label else 0.0)
    if tilt:  # room for the first tilted label (cos 40° ≈ 0.77)
        left = max(left, longest * 0.77 - group_w / 2 + 8.0)
    width = left + plot_w + 16.0
    legend, legend_h = _legend(names, left, 36.0 if chart.title else 8.0, width - 16.0)
    top = (36.0 if chart.title else 8.0) + legend_h + (44.0 if upright else 18.0)
    plot_h = 220.0
    base = top + plot_h
    height = base + (longest * 0.64 + 22.0 if tilt else 26.0)
    parts = _open(width, height, chart.title)
    if chart.title:
        parts.append(_text(width / 2, 22, chart.title, size=14, cls="chart-title", weight="600"))
    parts += legend
    for tick in ticks(y_max):
        y = base - tick / y_max * plot_h
        parts.append(f'<line class="grid" x1="{_n(left)}" y1="{_n(y)}" x2="{_n(left + plot_w)}" y2="{_n(y)}" '
                     f'stroke="#e5e7eb" stroke-width="1"/>')
        parts.append(_text(left - 6, y + 4, format_value(tick, chart.percent), size=10, anchor="end",
                           cls="tick", fill="#6b7280"))
    if chart.y_label:
        parts.append(_text(16, top + plot_h / 2, chart.y_label, rotate=-90, cls="y-label"))
    for j, (cat, label) in enumerate(zip(cats, labels, strict=True)):
        x0 = left + j * group_w + (group_w - n_s * bar_w) / 2
        for i, name in enumerate(names):
            value = chart.series[name][j]
            x = x0 + i * bar_w
            cx = x + bar_w / 2
            shown = "n/a" if value is None else format_value(value, chart.percent)
            if value is not None:
                h = min(max(value, 0.0), y_max) / y_max * plot_h
                parts.append(f'<rect class="bar" data-series="{_attr(name)}" data-category="{_attr(cat)}" '
                             f'x="{_n(x + 1)}" y="{_n(base - h)}" width="{_n(max(bar_w - 2, 1))}" height="{_n(h)}" '
                             f'fill="{PALETTE[i % len(PALETTE)]}"><title>{escape(f"{name} · {cat}: {shown}")}'
                             f"</title></rect>")
                y = base - h - 4
            else:
                y = base - 4
            fill = "#9ca3af" if value is None else "#111827"
            if upright:
                parts.append(_text(cx + value_size * 0.35, y, shown, size=value_size, anchor="start", rotate=-90,
                                   cls="value", fill=fill))
            else:
                parts.append(_text(cx, y, shown, size=value_size, cls="value", fill=fill))
        cx = left + (j + 0.5) * group_w
        if tilt:
            parts.append(_text(cx, base + 14, label, anchor="end", rotate=-40, cls="category"))
        else:
            parts.append(_text(cx, base + 16, label, cls="category"))
    parts.append(f'<line class="axis" x1="{_n(left)}" y1="{_n(base)}" x2="{_n(left + plot_w)}" y2="{_n(base)}" '
                 f'stroke="#6b7280" stroke-width="1"/>')
    parts.append(f'<line class="axis" x1="{_n(left)}" y1="{_n(top)}" x2="{_n(left)}" y2="{_n(base)}" '
                 f'stroke="#6b7280" stroke-width="1"/>')
    return "\n".join([*parts, "</svg>"])
