"""The chat's profanity filter (docs/async-decisions.md S14).

A line is blocked when one of its words is on the word list: whole words only (so "Scunthorpe"
and "classic" pass), whatever their case, after simple leetspeak folding ("sh1t", "$hit!",
"a$$hole") and with letters repeated for emphasis squeezed ("shiiit"). The list ships with the
package (``profanity.txt``); a deployment may give its own file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Final

__all__ = ["ProfanityFilter", "default_filter", "load_words"]

#: Characters read as the letters they stand for.
_LEET: Final = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "i",
        "+": "t",
    }
)
#: Punctuation around a word, never part of it (a trailing "!" is an exclamation, not an i).
_AROUND: Final = "\"'`.,;:?!()[]{}<>*_~-/\\"
_LETTERS: Final = re.compile(r"[^\W\d_]+")
#: A letter repeated three times or more, and twice or more.
_RUN3: Final = re.compile(r"([^\W\d_])\1{2,}")
_RUN2: Final = re.compile(r"([^\W\d_])\1+")


def load_words(path: str | Path | None = None) -> list[str]:
    """The words of a list file (``None``: the one shipped with Parlour)."""
    if path is None:
        text = (
            resources.files("parlour.protocols.async_ws.state").joinpath("profanity.txt").read_text("utf-8")
        )
    else:
        text = Path(path).read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


class ProfanityFilter:
    """Whole words of a word list, folded as the module says."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words: frozenset[str] = frozenset(word.casefold() for word in words if word.strip())

    def blocks(self, text: str) -> bool:
        """Whether ``text`` has a word of the list."""
        return not self.words.isdisjoint(_candidates(text))


def _candidates(text: str) -> set[str]:
    """Every word of ``text`` as written ("shit!" -> shit) and with leetspeak read as letters
    (each whitespace-separated chunk stripped of the punctuation around it first), each also
    with emphasis squeezed: "shiiit" (shit), "asssss" (ass, if listed), "fuuuck" (fuck). The
    regular expressions run over all the words at once (runs of a letter never cross the
    spaces between them), not once per word: every lobby line passes here."""
    folded = text.casefold()
    stripped = " ".join([chunk.strip(_AROUND) for chunk in folded.split()])
    words = " ".join(_LETTERS.findall(folded) + _LETTERS.findall(stripped.translate(_LEET)))
    return {*words.split(), *_RUN3.sub(r"\1\1", words).split(), *_RUN2.sub(r"\1", words).split()}


@cache
def default_filter() -> ProfanityFilter:
    """The filter of the shipped word list (read once)."""
    return ProfanityFilter(load_words())
