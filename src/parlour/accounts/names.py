"""What an account name and a password may be (docs/async-decisions.md S4).

A name has 1 to 40 characters: ASCII letters, digits, ``_``, ``-`` and ``.``, starting with a
letter or a digit. ASCII only, deliberately: names are shown to other players, and Unicode
look-alikes ("аnn" with a Cyrillic "а") would let one player pass for another. Names are
unique whatever their case (the store compares ``name.casefold()``).

A password has 8 to 256 characters, any of them. The messages say what is wrong, in words a
player can act on; they never repeat the password.
"""

from __future__ import annotations

import re

__all__ = [
    "NAME_MAX",
    "PASSWORD_MAX",
    "PASSWORD_MIN",
    "InvalidName",
    "InvalidPassword",
    "check_name",
    "check_password",
    "name_problem",
    "password_problem",
]

NAME_MAX = 40
PASSWORD_MIN = 8
PASSWORD_MAX = 256
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
_NAME_START = re.compile(r"[A-Za-z0-9]")


class InvalidName(ValueError):
    """A name that cannot be an account's; the message says why."""


class InvalidPassword(ValueError):
    """A password that cannot be set; the message says why (never the password)."""


def name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as an account name, or None when it is fine."""
    if not name:
        return "a name is required"
    if len(name) > NAME_MAX:
        return f"a name has at most {NAME_MAX} characters, not {len(name)}"
    if not _NAME_START.fullmatch(name[0]):
        return "a name starts with a letter or a digit"
    if not _NAME_CHARS.fullmatch(name):
        bad = next(char for char in name if not _NAME_CHARS.fullmatch(char))
        return f"a name has only letters, digits, '_', '-' and '.', not {bad!r}"
    return None


def password_problem(password: str) -> str | None:
    """What is wrong with ``password`` as a new password, or None when it is fine."""
    if len(password) < PASSWORD_MIN:
        return f"a password has at least {PASSWORD_MIN} characters"
    if len(password) > PASSWORD_MAX:
        return f"a password has at most {PASSWORD_MAX} characters"
    return None


def check_name(name: str) -> str:
    """``name``, or InvalidName saying what is wrong with it."""
    problem = name_problem(name)
    if problem is not None:
        raise InvalidName(problem)
    return name


def check_password(password: str) -> str:
    """``password``, or InvalidPassword saying what is wrong with it."""
    problem = password_problem(password)
    if problem is not None:
        raise InvalidPassword(problem)
    return password
