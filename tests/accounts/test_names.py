"""What account names and passwords may be, and the messages that say what is wrong."""

from __future__ import annotations

import pytest

from parlour.accounts import (
    InvalidName,
    InvalidPassword,
    check_name,
    check_password,
    name_problem,
    password_problem,
)


@pytest.mark.parametrize("name", ["a", "Ann", "9lives", "ann.b-c_d", "x" * 40, "A.-_0"])
def test_good_names(name: str) -> None:
    assert name_problem(name) is None
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "a name is required"),
        ("x" * 41, "a name has at most 40 characters, not 41"),
        ("_ann", "a name starts with a letter or a digit"),
        (".ann", "a name starts with a letter or a digit"),
        ("-ann", "a name starts with a letter or a digit"),
        ("ann smith", "a name has only letters, digits, '_', '-' and '.', not ' '"),
        ("ann@home", "not '@'"),
        ("ann\n", r"not '\n'"),
        ("аnn", "a name starts with a letter or a digit"),  # a Cyrillic "а"
        ("anné", "not 'é'"),
    ],
)
def test_bad_names_say_what_is_wrong(name: str, problem: str) -> None:
    message = name_problem(name)
    assert message is not None and problem in message
    with pytest.raises(InvalidName) as refused:
        check_name(name)
    assert str(refused.value) == message
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize("password", ["12345678", "x" * 256, "correct horse battery staple", "ünïcödé!"])
def test_good_passwords(password: str) -> None:
    assert password_problem(password) is None
    assert check_password(password) == password


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("", "a password has at least 8 characters"),
        ("1234567", "a password has at least 8 characters"),
        ("x" * 257, "a password has at most 256 characters"),
    ],
)
def test_bad_passwords_say_what_is_wrong_without_repeating_them(password: str, problem: str) -> None:
    assert password_problem(password) == problem
    with pytest.raises(InvalidPassword) as refused:
        check_password(password)
    assert str(refused.value) == problem
    if password:
        assert password not in str(refused.value)
