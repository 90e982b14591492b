"""The per-model price table: the shipped file, a user's file merged over it, lookups, and errors that name
the file and the line."""

from __future__ import annotations

import datetime
import textwrap

import pytest

from pytest_itbench.report.model_prices import SHIPPED, PriceFileError, for_session, load, shipped


def write(tmp_path, text: str, name: str = "prices.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_shipped_table_is_dated_and_sourced():
    table = shipped()
    assert len(table.prices) >= 10
    read_on = {p.read_on for p in table.prices.values()}
    assert len(read_on) == 1 and datetime.date.fromisoformat(read_on.pop())  # one date, a real one
    assert all(p.source.startswith("https://") for p in table.prices.values())
    assert all(0 < p.input <= p.output for p in table.prices.values())  # output tokens cost more everywhere
    assert SHIPPED.name == "model_prices.yaml"


def test_a_users_file_is_merged_over_the_shipped_one(tmp_path):
    path = write(tmp_path, """\
        read_on: 2027-01-15
        models:
          GPT-4o: {input: 2.00, output: 8, source: https://example.com/new-prices}
          my-model: {input: 0.5, output: 1.5, read_on: 2027-02-01}
        """)
    table = for_session(path)
    assert (table.price_of("gpt-4o").input, table.price_of("gpt-4o").read_on) == (2.0, "2027-01-15")
    assert table.price_of("gpt-4o").source == "https://example.com/new-prices"
    mine = table.price_of("my-model")
    assert (mine.input, mine.output, mine.read_on, mine.source) == (0.5, 1.5, "2027-02-01", str(path))
    assert table.price_of("claude-sonnet-4-5") == shipped().price_of("claude-sonnet-4-5")  # the rest kept
    assert for_session(None) is shipped()


def test_cost_is_tokens_times_price_per_million(tmp_path):
    price = load(write(tmp_path, "read_on: 2027-01-15\nmodels: {m: {input: 3, output: 15}}\n")).price_of("m")
    # 12,000 in at $3/M = 0.036; 3,000 out at $15/M = 0.045
    assert price.cost(12_000, 3_000) == pytest.approx(0.081)


@pytest.mark.parametrize("model, priced_as", [
    ("gpt-4o", "gpt-4o"), ("GPT-4o", "gpt-4o"), ("openai/gpt-4o", "gpt-4o"), ("gpt-4o-2024-08-06", "gpt-4o"),
    ("gpt-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"), ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ("gpt-4o-audio-preview", None), ("granite-3.1-8b", None), ("", None)])
def test_lookup_by_name_provider_prefix_and_snapshot(model, priced_as):
    found = shipped().price_of(model)
    assert (found.model if found else None) == priced_as


BAD = [
    ("", 1, "empty; a price file has read_on: DATE and models"),
    ("read_on: 2026-11-30\nmodels: [a, b\n", 3, "not valid YAML"),
    ("- 1\n- 2\n", 1, "a price file must be a mapping"),
    ("models:\n  a: {input: 1, output: 2}\n", 1, "read_on is missing"),
    ("read_on: yesterday\nmodels: {}\n", 1, "read_on must be a date like 2026-11-30, got 'yesterday'"),
    ("read_on: 2026-11-30\ncurrency: EUR\nmodels: {}\n", 2, "unknown key 'currency'"),
    ("read_on: 2026-11-30\nmodels:\n  gpt-4o: {input: 2.5}\n", 3, "models.gpt-4o: output (US dollars per million "
                                                                    "output tokens) is missing"),
    ("read_on: 2026-11-30\nmodels:\n  a: {input: 1, output: 2}\n  b:\n    input: $2.50\n    output: 10\n", 5,
     "models.b.input must be a number of US dollars per million tokens (0 or more), got '$2.50'"),
    ("read_on: 2026-11-30\nmodels:\n  a: {input: 1, output: -2}\n", 3, "models.a.output must be a number"),
    ("read_on: 2026-11-30\nmodels:\n  a: {input: 1, output: true}\n", 3, "got True"),
    ("read_on: 2026-11-30\nmodels:\n  a: {input: 1, output: 2, cached: 0.5}\n", 3, "models.a: unknown key 'cached'"),
    ("read_on: 2026-11-30\nmodels:\n  a: {input: 1, output: 2}\n  A: {input: 1, output: 3}\n", 4,
     "models: 'A' is given twice"),
    ("read_on: 2026-11-30\nmodels:\n  a: 2.5\n", 3, "models.a must be a mapping"),
]


@pytest.mark.parametrize("text, line, message", BAD, ids=[m.split(" (")[0][:40] for _, _, m in BAD])
def test_a_bad_file_names_itself_and_the_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(PriceFileError) as error:
        load(path)
    assert str(error.value).startswith(f"{path}:{line}: "), str(error.value)
    assert message in str(error.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(PriceFileError, match=r"nowhere\.yaml: cannot be read"):
        load(tmp_path / "nowhere.yaml")
