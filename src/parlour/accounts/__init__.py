"""Accounts of the /async protocol (docs/async-decisions.md S4): pure helpers.

Password hashes (Argon2id), session tokens and an external provider's JWTs (PyJWT), the
failed-login limiter, and what names and passwords may be. Nothing here does I/O or reads the
clock: the store keeps the accounts, the caller passes ``now``.
"""

from __future__ import annotations

from parlour.accounts.limits import LoginLimiter
from parlour.accounts.names import (
    NAME_MAX,
    PASSWORD_MAX,
    PASSWORD_MIN,
    InvalidName,
    InvalidPassword,
    check_name,
    check_password,
    name_problem,
    password_problem,
)
from parlour.accounts.passwords import hash_password, make_hasher, needs_rehash, verify_password
from parlour.accounts.tokens import (
    ExternalJwt,
    SessionTokens,
    TokenError,
    TokenExpired,
    TokenInvalid,
    TokenRevoked,
)

__all__ = [
    "NAME_MAX",
    "PASSWORD_MAX",
    "PASSWORD_MIN",
    "ExternalJwt",
    "InvalidName",
    "InvalidPassword",
    "LoginLimiter",
    "SessionTokens",
    "TokenError",
    "TokenExpired",
    "TokenInvalid",
    "TokenRevoked",
    "check_name",
    "check_password",
    "hash_password",
    "make_hasher",
    "name_problem",
    "needs_rehash",
    "password_problem",
    "verify_password",
]
