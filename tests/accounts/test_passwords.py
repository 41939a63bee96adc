"""Argon2id password hashes: round trip, wrong passwords, and rehashing to new parameters."""

from __future__ import annotations

import dataclasses
import unicodedata

import pytest

from parlour.accounts import hash_password, make_hasher, needs_rehash, verify_password
from parlour.accounts.passwords import DEFAULT, FAST

HASHER = make_hasher(FAST)


def test_a_password_verifies_against_its_hash_and_a_wrong_one_does_not() -> None:
    hashed = hash_password("correct horse battery", HASHER)
    assert hashed.startswith("$argon2id$")
    assert "correct horse" not in hashed
    assert verify_password(hashed, "correct horse battery", HASHER)
    assert not verify_password(hashed, "correct horse battery!", HASHER)
    assert not verify_password(hashed, "Correct horse battery", HASHER)
    assert not verify_password(hashed, "", HASHER)


def test_every_hash_has_its_own_salt() -> None:
    first, second = hash_password("same password", HASHER), hash_password("same password", HASHER)
    assert first != second
    assert verify_password(first, "same password", HASHER) and verify_password(
        second, "same password", HASHER
    )


@pytest.mark.parametrize("stored", ["", "not a hash", "$argon2id$v=19$m=8,t=1,p=1$broken", "$2b$12$bcrypt"])
def test_a_hash_that_is_not_one_never_verifies_and_never_raises(stored: str) -> None:
    # "" is what an account of an external OAuth2 provider keeps: it has no password.
    assert verify_password(stored, "whatever password", HASHER) is False


def test_an_overlong_password_is_refused_without_hashing() -> None:
    hashed = hash_password("x" * 256, HASHER)
    assert verify_password(hashed, "x" * 256, HASHER)
    assert not verify_password(hashed, "x" * 257, HASHER)


def test_passwords_are_compared_in_one_unicode_form() -> None:
    composed = unicodedata.normalize("NFC", "café crème")
    decomposed = unicodedata.normalize("NFD", "café crème")
    assert composed != decomposed
    assert verify_password(hash_password(composed, HASHER), decomposed, HASHER)


def test_a_hash_made_with_other_parameters_verifies_and_asks_to_be_rehashed() -> None:
    stronger = make_hasher(dataclasses.replace(FAST, time_cost=2))
    old = hash_password("password one", HASHER)
    assert verify_password(old, "password one", stronger)
    assert needs_rehash(old, stronger)
    assert not needs_rehash(old, HASHER)
    assert needs_rehash("", HASHER)


def test_the_default_is_rfc_9106s_low_memory_profile() -> None:
    assert (DEFAULT.time_cost, DEFAULT.memory_cost, DEFAULT.parallelism) == (3, 65536, 4)
    assert DEFAULT.type.name == "ID"
