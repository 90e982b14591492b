"""Per-model token prices, to turn the tokens a trial's agent spent into US dollars.

The shipped table is ``model_prices.yaml`` beside this module: well-known models' public list prices per
million input and output tokens, with the date they were read (``read_on``). A table of your own, given
with ``--itbench-prices=FILE`` or the ini option ``itbench_prices``, is read the same way and merged over
it: its models replace the shipped ones of the same name and add to them, so a newer price or a private
model needs one line, not a copy of the whole table.

A price file is checked when the session starts; a mistake is a usage error that names the file and
the line, so a typo never silently turns every cost into "not measured".
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

SHIPPED = Path(__file__).with_name("model_prices.yaml")
OPTION, INI = "--itbench-prices", "itbench_prices"
PER = 1_000_000  # prices are per million tokens, as the vendors publish them

# A dated snapshot (gpt-4o-2024-08-06, claude-sonnet-4-5-20250929) or a moving alias (-latest) is priced
# as its base name, unless the table lists the full name.
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_ENTRY_KEYS = {"input", "output", "source", "read_on"}


class PriceFileError(ValueError):
    """A price file that cannot be used; the message starts with ``path:line:``."""


@dataclass(frozen=True)
class ModelPrice:
    model: str
    input: float  # US dollars per million input (prompt) tokens
    output: float  # US dollars per million output (completion) tokens
    read_on: str  # ISO date the price was read from its source
    source: str = ""  # where it was read: the vendor's page, else the price file

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / PER

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "read_on": self.read_on, "source": self.source}


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)  # by lower-case model name

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of ``model``: by its name, without a provider prefix (``openai/``), or as its base name."""
        name = model.strip().lower()
        for candidate in (name, name.rsplit("/", 1)[-1]):
            for key in (candidate, _SNAPSHOT.sub("", candidate)):
                if key in self.prices:
                    return self.prices[key]
        return None

    def merged(self, other: "PriceTable") -> "PriceTable":
        """This table with ``other``'s prices replacing and adding to its own."""
        return PriceTable({**self.prices, **other.prices})


@functools.lru_cache(maxsize=None)
def shipped() -> PriceTable:
    return load(SHIPPED)


def for_session(path: str | Path | None) -> PriceTable:
    """The shipped table, with the file at ``path`` (if any) merged over it."""
    return shipped() if path is None else shipped().merged(load(path))


def load(path: str | Path) -> PriceTable:
    """Read a price file: ``read_on: DATE`` and ``models: {NAME: {input: X, output: Y, source: URL}}``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"{path}: cannot be read ({exc})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise PriceFileError(f"{path}:{mark.line + 1 if mark else 1}: not valid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise PriceFileError(f"{path}:1: not valid YAML: {exc}") from None
    return _Reader(path).table(root)


class _Reader:
    """Walks the composed YAML so that every complaint can name the line it is about."""

    def __init__(self, path: Path):
        self.path = path
        self.constructor = yaml.constructor.SafeConstructor()

    def fail(self, node: yaml.Node | None, message: str) -> PriceFileError:
        line = node.start_mark.line + 1 if node is not None else 1
        return PriceFileError(f"{self.path}:{line}: {message}")

    def mapping(self, node: yaml.Node | None, what: str, allowed: set[str] | None = None
                ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        found: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            name = self.constructor.construct_object(key, deep=True)
            if not isinstance(name, str) or not name.strip():
                raise self.fail(key, f"{what}: a key must be a non-empty name, got {name!r}")
            if allowed is not None and name not in allowed:
                raise self.fail(key, f"{what}: unknown key {name!r} (allowed: {', '.join(sorted(allowed))})")
            if name.lower() in {k.lower() for k in found}:
                raise self.fail(key, f"{what}: {name!r} is given twice")
            found[name] = (key, value)
        return found

    def table(self, root: yaml.Node | None) -> PriceTable:
        if root is None:
            raise PriceFileError(f"{self.path}:1: empty; a price file has read_on: DATE and models: {{...}}")
        top = self.mapping(root, "a price file", {"read_on", "models"})
        for required in ("read_on", "models"):
            if required not in top:
                raise self.fail(root, f"read_on (the date the prices were read) and models are required; "
                                      f"{required} is missing")
        read_on = self.date(*top["read_on"], "read_on")
        models = self.mapping(top["models"][1], "models")
        prices = {}
        for name, (key, value) in models.items():
            entry = self.mapping(value, f"models.{name}", _ENTRY_KEYS)
            for required in ("input", "output"):
                if required not in entry:
                    raise self.fail(key, f"models.{name}: {required} (US dollars per million {required} "
                                         f"tokens) is missing")
            source = self.constructor.construct_object(entry["source"][1]) if "source" in entry else str(self.path)
            prices[name.strip().lower()] = ModelPrice(
                model=name.strip(), input=self.price(entry["input"][1], f"models.{name}.input"),
                output=self.price(entry["output"][1], f"models.{name}.output"),
                read_on=self.date(*entry["read_on"], f"models.{name}.read_on") if "read_on" in entry else read_on,
                source=str(source))
        return PriceTable(prices)

    def price(self, node: yaml.Node, what: str) -> float:
        value = self.constructor.construct_object(node, deep=True)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise self.fail(node, f"{what} must be a number of US dollars per million tokens (0 or more), "
                                  f"got {value!r}")
        return float(value)

    def date(self, key: yaml.Node, node: yaml.Node, what: str) -> str:
        value = self.constructor.construct_object(node, deep=True)
        if isinstance(value, datetime.date):
            return value.isoformat()[:10]
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value.strip()).isoformat()
            except ValueError:
                pass
        raise self.fail(node, f"{what} must be a date like 2026-11-30, got {value!r}")


# ---- the session's option ----------------------------------------------------------------------------------------
def add_options(parser: Any, group: Any) -> None:
    help_text = ("a YAML file of per-model token prices (read_on, models: {NAME: {input, output}}, US dollars "
                 "per million tokens) merged over the shipped table, to price each trial's tokens")
    group.addoption(OPTION, metavar="FILE", help=help_text)
    parser.addini(INI, help_text + f"; {OPTION} overrides it", default="")


def from_config(config: Any) -> PriceTable:
    """The session's price table; a bad file is a usage error naming it and the line."""
    import pytest

    given = config.getoption(OPTION.lstrip("-").replace("-", "_"))
    if given:
        path, origin = Path(config.invocation_params.dir, given), f"{OPTION}={given}"
    elif config.getini(INI):
        # An ini path is relative to the ini file, wherever pytest is started from.
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        path, origin = base / config.getini(INI), f"{INI} = {config.getini(INI)}"
    else:
        return shipped()
    try:
        return for_session(path)
    except PriceFileError as exc:
        raise pytest.UsageError(f"{origin}: {exc}") from None
