"""``itbench-report html``: one static results page, no server: it opens from disk and works offline.

The page holds the leaderboard (each contestant's figures overall, by domain and by complexity), the matrix
of scenarios by contestants (each cell the runs' outcomes), pass@k and pass^k curves, pass@1 by domain, and
pass@1 against cost.

The plots are drawn with Plotly (plotly.py). It is made for this: one call writes a figure as HTML with its
JavaScript inlined once in the page, so the file needs no network and no server; the plots are interactive
(hover names the contestant and the figure, zoom, export as PNG), which a page compared by people needs; and
the package is pure Python with no compiled parts. Matplotlib would give fixed images with no hover;
Altair (Vega-Lite) inlines its JavaScript only with the extra vl-convert package, else loads it from a
CDN; Bokeh's standalone files load BokehJS from a CDN unless told otherwise and need more templating.
"""

from __future__ import annotations

import html
from typing import Any

from pytest_itbench.report import leaderboard
from pytest_itbench.report.compare import Comparison, columns
from pytest_itbench.report.figures import Figures

PLOTS = ("plot-pass-at-k", "plot-by-domain", "plot-score-cost")  # the ids of the page's plots, in its order

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
tr.block-start td { border-top: 2px solid #888; }
td.pass { background: #c8e6c9; } td.fail { background: #ffcdd2; } td.error { background: #e0e0e0; }
td.mixed { background: #fff3c4; } td.absent { color: #999; }
.note { color: #555; font-size: 0.85em; }
"""


class HtmlUnavailable(RuntimeError):
    """Plotly is not installed."""


def page(comparison: Comparison, notes: list[str]) -> str:
    """The whole page as one HTML document."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise HtmlUnavailable("itbench-report html draws its plots with Plotly, which is not installed: "
                              "pip install 'pytest-itbench[report]'") from None
    contestants = ", ".join(html.escape(label) for label in comparison.labels)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ITBench results: {contestants}</title>", f"<style>{_CSS}</style>",
        f"<script>{get_plotlyjs()}</script>", "</head><body>",
        f"<h1>ITBench results: {contestants}</h1>",
        f'<p class="note">{len(comparison.trials())} scenario(s) compared; files: '
        + "; ".join(f"{html.escape(c.label)}: {html.escape(', '.join(c.files))} (agent {html.escape(c.agents)})"
                    for c in comparison.contestants) + "</p>",
        *(f'<p class="note">note: {html.escape(note)}</p>' for note in notes),
        "<h2>Leaderboard</h2>", _leaderboard(comparison),
        "".join(f'<p class="note">{html.escape(line)}</p>' for line in leaderboard.NOTE),
        "<h2>pass@k and pass^k</h2>", _pass_at_k_plot(comparison),
        "<h2>pass@1 by domain</h2>", _by_domain_plot(comparison),
        "<h2>pass@1 against cost</h2>", _score_cost_plot(comparison),
        "<h2>Scenarios by contestant</h2>", _matrix(comparison),
        "</body></html>",
    ]
    return "\n".join(parts)


def _leaderboard(comparison: Comparison) -> str:
    """The comparison's table with the columns of its text (compare.columns), a block of rows per group."""
    rows = comparison.blocks()
    shown = columns(rows, comparison.ks)

    def cell(tag: str, text: str, left: bool) -> str:
        return f'<{tag}{" class=text" if left else ""}>{html.escape(text)}</{tag}>'

    body = []
    for block in rows:
        for i, (_, f) in enumerate(block):
            first = ' class="block-start"' if i == 0 else ""
            body.append(f"<tr{first}>" + "".join(cell("td", make(f), left) for _, make, left in shown) + "</tr>")
    head = "".join(cell("th", name, left) for name, _, left in shown)
    return f'<table id="leaderboard"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _matrix(comparison: Comparison) -> str:
    marks = comparison.marks()
    any_run = {r.trial_id: r for c in comparison.contestants for r in c.results}
    head = ('<th class="text">scenario</th><th class="text">domain</th><th class="text">level</th>'
            + "".join(f"<th>{html.escape(label)}</th>" for label in comparison.labels))
    rows = []
    for trial in comparison.trials():
        cells = "".join(_outcome_cell(marks[label].get(trial, "")) for label in comparison.labels)
        r = any_run[trial]
        rows.append(f'<tr><td class="text">{html.escape(trial)}</td><td class="text">{html.escape(r.domain)}</td>'
                    f'<td class="text">{html.escape(r.complexity)}</td>{cells}</tr>')
    return (f'<table id="matrix"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            '<p class="note">each cell: the runs in order, P passed, F failed, E error (the environment broke)</p>')


def _outcome_cell(runs: str) -> str:
    kinds = {_KIND[m] for m in runs}
    kind = "absent" if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    return f'<td class="{kind}" title="{kind}">{html.escape(runs or "-")}</td>'


_KIND = {"P": "pass", "F": "fail", "E": "error", "?": "error"}


def _pass_at_k_plot(comparison: Comparison) -> str:
    import plotly.graph_objects as go
    figure = go.Figure()
    for label, overall in _overall(comparison):
        ks = [k for k in comparison.ks if overall.pass_at.get(k) is not None]
        figure.add_trace(go.Scatter(x=ks, y=[100 * overall.pass_at[k] for k in ks], mode="lines+markers",
                                    name=f"{label} pass@k"))
        figure.add_trace(go.Scatter(x=ks, y=[100 * overall.pass_hat[k] for k in ks], mode="lines+markers",
                                    line={"dash": "dash"}, name=f"{label} pass^k"))
    figure.update_layout(xaxis_title="k (runs)", yaxis_title="% of scenarios", yaxis_range=[0, 100],
                         xaxis={"tickmode": "array", "tickvals": comparison.ks})
    return _div(figure, "plot-pass-at-k")


def _by_domain_plot(comparison: Comparison) -> str:
    import plotly.graph_objects as go
    figure = go.Figure()
    domains = [block for block in comparison.blocks() if block[0][1].label in ("sre", "ciso", "finops")]
    for i, label in enumerate(comparison.labels):
        values = [block[i][1] for block in domains]
        figure.add_trace(go.Bar(x=[f.label for f in values], y=[_hundred(f.pass_at.get(1)) for f in values],
                                name=label, error_y={"type": "data", "array": [_hundred(f.stderr) or 0 for f in values]}))
    figure.update_layout(barmode="group", yaxis_title="pass@1 (%)", yaxis_range=[0, 100])
    return _div(figure, "plot-by-domain")


def _score_cost_plot(comparison: Comparison) -> str:
    """pass@1 against the mean cost per trial; tokens where no contestant's tokens were priced."""
    import plotly.graph_objects as go
    overall = _overall(comparison)
    priced = any(f.cost_usd is not None for _, f in overall)
    measure, title = (("cost_usd", "mean cost per trial (US$)") if priced else
                      ("tokens", "mean tokens per trial (no trial was priced)"))
    figure = go.Figure()
    unmeasured = []
    for label, f in overall:
        x = getattr(f, measure)
        if x is None:
            unmeasured.append(label)
            continue
        figure.add_trace(go.Scatter(x=[x], y=[_hundred(f.pass_at.get(1))], mode="markers+text", text=[label],
                                    textposition="top center", name=label, marker={"size": 12},
                                    error_y={"type": "data", "array": [_hundred(f.stderr) or 0]}))
    if unmeasured:
        figure.add_annotation(text=f"not measured ({'cost' if priced else 'tokens'}): {', '.join(unmeasured)}",
                              xref="paper", yref="paper", x=0, y=1.08, showarrow=False, align="left")
    figure.update_layout(xaxis_title=title, yaxis_title="pass@1 (%)", yaxis_range=[0, 100], showlegend=False)
    return _div(figure, "plot-score-cost")


def _overall(comparison: Comparison) -> list[tuple[str, Figures]]:
    return comparison.blocks()[0]


def _div(figure: Any, div_id: str) -> str:
    figure.update_layout(height=420, margin={"t": 40})
    return figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                          config={"displaylogo": False, "responsive": True})


def _hundred(value: float | None) -> float | None:
    return None if value is None else 100 * value
