"""The judge's prompts: files shipped with the package, each known by the hash of its text.

A result records the hash of each prompt it was graded with, so scores graded by different wordings are
never compared by mistake; changing a prompt's text changes its hash, whatever its file is called.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

NAMES = ("root_cause_reasoning", "rubric")


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str

    @property
    def version(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]


def load(name: str) -> Prompt:
    return Prompt(name, resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8"))


def all_prompts() -> dict[str, Prompt]:
    return {name: load(name) for name in NAMES}
