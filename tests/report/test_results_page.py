"""itbench-report html: the page is opened in headless Chromium (Debian's chromium, installed by .ci/run) and
what the browser rendered is checked: the leaderboard and the matrix as tables, and each plot drawn by Plotly
with its traces, legend and points. The page must work from a file: URL with no network."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess

import pytest

from pytest_itbench.report import cli
from pytest_itbench.report.html import PLOTS

from .contestants import specs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def rendered(page, profile) -> str:
    """The page's DOM after its scripts ran, as the browser holds it."""
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (.ci/run installs Debian's chromium)")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom", page.as_uri()]
    browser = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, env={**os.environ, "HOME": str(profile)})
    try:
        dom, errors = browser.communicate(timeout=90)
    finally:
        if browser.poll() is None:
            os.killpg(browser.pid, signal.SIGKILL)  # chromium's helpers are in its process group
            browser.wait()
    assert browser.returncode == 0 and dom, errors[-3000:]
    return dom


def section(dom: str, element_id: str) -> str:
    """The DOM from the element's id to the next plot's or table's."""
    start = dom.index(f'id="{element_id}"')
    ends = [i for i in (dom.find('id="plot-', start + 1), dom.find("<table", start + 1)) if i > 0]
    return dom[start:min(ends, default=len(dom))]


def test_the_browser_renders_the_tables_and_every_plot(tmp_path):
    page = tmp_path / "results.html"
    assert cli.main(["html", *specs(tmp_path), "-o", str(page)]) == 0
    dom = rendered(page, tmp_path / "profile")

    leaderboard = section(dom, "leaderboard")
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", leaderboard)]
    by_group = {(r[0], r[1]): r for r in rows if r}
    assert set(by_group) == {(g, c) for g in ("all", "sre", "easy", "medium", "hard") for c in ("gpt", "claude")}
    assert by_group["all", "gpt"][6] == "50.0±28.9" and by_group["all", "claude"][6] == "66.7±16.7"

    matrix = section(dom, "matrix")
    cells = [re.findall(r'<td class="(\w+)"[^>]*>([^<]*)</td>', row) for row in re.findall(r"<tr>(.*?)</tr>", matrix)]
    assert [[text for _, text in row] for row in cells if row] == [
        ["s-easy", "sre", "easy", "PP", "PP"], ["s-hard", "sre", "hard", "PF", "PF"],
        ["s-medium", "sre", "medium", "FF", "PF"]]
    assert [[kind for kind, _ in row[3:]] for row in cells if row] == [["pass", "pass"], ["mixed", "mixed"],
                                                                          ["fail", "mixed"]]

    drawn = {plot: section(dom, plot) for plot in PLOTS}
    for plot, html in drawn.items():
        assert 'class="main-svg"' in html, f"{plot} was not drawn"
    legend = {plot: re.findall(r'class="legendtext"[^>]*>([^<]*)<', html) for plot, html in drawn.items()}
    assert legend["plot-pass-at-k"] == ["gpt pass@k", "gpt pass^k", "claude pass@k", "claude pass^k"]
    lines = re.findall(r'class="js-line"[^>]*d="(M[\d.,]+L[^"]+)"', drawn["plot-pass-at-k"])
    assert len(lines) == 4  # each curve has a path through its points (the legend's samples are "M5,0h30")
    assert legend["plot-by-domain"] == ["gpt", "claude"]
    assert len(re.findall(r'<g class="trace bars"', drawn["plot-by-domain"])) == 2
    labels = re.findall(r'class="textpoint"[^>]*>.*?<text[^>]*>([^<]*)<', drawn["plot-score-cost"])
    assert labels == ["gpt", "claude"]  # one point each, against its cost
    assert "mean cost per trial (US$)" in drawn["plot-score-cost"]


def test_without_a_price_the_cost_plot_falls_back_to_tokens_and_names_the_unmeasured(tmp_path):
    from pytest_itbench.report.compare import compare
    from pytest_itbench.report.html import page
    from .contestants import runs, write
    priced = write(tmp_path / "a.jsonl", runs("a", "s1", {"x": "P"}, None, 500))
    unpriced = write(tmp_path / "b.jsonl", runs("b", "s2", {"x": "F"}, None, None))
    text = page(*compare([priced, unpriced]))
    assert "mean tokens per trial (no trial was priced)" in text
    assert "not measured (tokens): b" in text


def test_an_unwritable_output_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["html", *specs(tmp_path), "-o", str(tmp_path / "no-such-dir" / "page.html")]) == 2
    assert "itbench-report html: cannot write" in capsys.readouterr().err
