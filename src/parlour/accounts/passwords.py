"""Password hashes for Parlour's own accounts (docs/async-decisions.md S4): Argon2id.

The default parameters are RFC 9106's second recommendation, the "low-memory" profile
(3 passes over 64 MiB, 4 lanes): tens of milliseconds of CPU and 64 MiB per hash, so the
server calls these off its event loop (argon2-cffi lets go of the interpreter lock meanwhile).
Tests use ``make_hasher(FAST)``, which is worthless against an attacker but instant.

Passwords are normalised to Unicode NFC before hashing, so a password typed on a keyboard that
composes "é" differently still matches. Neither a password nor a hash is ever logged.
"""

from __future__ import annotations

import unicodedata

from argon2 import Parameters, PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

from parlour.accounts.names import PASSWORD_MAX

__all__ = ["DEFAULT", "FAST", "hash_password", "make_hasher", "needs_rehash", "verify_password"]

#: RFC 9106's low-memory profile: what every account's hash is made with by default.
DEFAULT: Parameters = profiles.RFC_9106_LOW_MEMORY
#: The cheapest parameters Argon2id takes: for tests only.
FAST: Parameters = profiles.CHEAPEST


def make_hasher(parameters: Parameters = DEFAULT) -> PasswordHasher:
    """A hasher with these parameters (hashes made with others still verify)."""
    return PasswordHasher.from_parameters(parameters)


_DEFAULT_HASHER = make_hasher()


def _normal(password: str) -> str:
    return unicodedata.normalize("NFC", password)


def hash_password(password: str, hasher: PasswordHasher = _DEFAULT_HASHER) -> str:
    """The PHC string (``$argon2id$v=19$m=...``) to keep for ``password``, with a fresh salt."""
    return hasher.hash(_normal(password))


def verify_password(password_hash: str, password: str, hasher: PasswordHasher = _DEFAULT_HASHER) -> bool:
    """Whether ``password`` is the one ``password_hash`` was made from.

    False, never an exception, for a wrong password, and for a hash that is not an Argon2 hash
    at all (e.g. "" for an account of an external OAuth2 provider, which has no password).
    """
    if not password_hash or len(password) > PASSWORD_MAX:
        # No such password could have been set: not worth hashing a megabyte to find out.
        return False
    try:
        return hasher.verify(password_hash, _normal(password))
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str, hasher: PasswordHasher = _DEFAULT_HASHER) -> bool:
    """Whether a hash that just verified was made with other parameters than ``hasher``'s
    (then hash the password again and store that): how an account follows stronger defaults."""
    try:
        return hasher.check_needs_rehash(password_hash)
    except InvalidHashError:
        return True
