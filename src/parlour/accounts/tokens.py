"""Session tokens (docs/async-decisions.md S4): signed, expiring JWTs.

``SessionTokens`` issues and checks Parlour's own tokens: HS256 under the store's 32-byte
``session_secret`` (``Store.ensure_secret``), so they outlive a restart and every node of a
cluster accepts them. ``ExternalJwt`` checks the tokens of a deployment's own OAuth2/OIDC
provider instead (the ``auth_jwt_*`` settings).

Time is passed in (``now``, seconds since the epoch): PyJWT's own checks of ``exp``, ``nbf`` and
``iat`` read the wall clock, so they are turned off and done here against ``now``.
Tokens and keys never reach a log or an error message; errors say what was wrong, not what
the token held.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jwt

if TYPE_CHECKING:
    from jwt.types import Options

    from parlour.settings import Settings

__all__ = [
    "ISSUER",
    "ExternalJwt",
    "SessionTokens",
    "TokenError",
    "TokenExpired",
    "TokenInvalid",
    "TokenRevoked",
]

#: The ``iss`` of Parlour's own tokens.
ISSUER = "parlour"
#: The algorithm of Parlour's own tokens, and the shortest secret it is given (RFC 7518 3.2).
SESSION_ALGORITHM = "HS256"
#: The shortest shared secret each HMAC algorithm is safe with: its hash's size (RFC 7518 3.2).
HMAC_KEY_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
#: Public-key algorithms (these need the ``cryptography`` package: ``pip install 'PyJWT[crypto]'``).
PUBLIC_KEY_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES256K", "ES384", "ES512", "EdDSA"}
)
#: The claims of Parlour's own tokens, every one required.
SESSION_CLAIMS = ["sub", "name", "iat", "exp", "iss", "jti"]


class TokenError(Exception):
    """A token was refused. The message says why, never what the token holds."""


class TokenExpired(TokenError):
    """A token that was valid, but is no more: log in again."""


class TokenRevoked(TokenExpired):
    """A token issued before its account's revocation counter moved on (sign out everywhere, a
    ban, a new password): as good as expired, sign in again."""


class TokenInvalid(TokenError):
    """Not a token this server accepts: malformed, badly signed, someone else's, wrong issuer..."""


def _decode(
    token: str,
    key: Any,
    algorithms: Sequence[str],
    require: list[str],
    issuer: str | None,
    audience: str | None = None,
) -> dict[str, Any]:
    """The claims of a token signed with ``key`` by one of ``algorithms``, with the ``require``d
    claims present and the issuer and audience (when given) checked by PyJWT."""
    options: Options = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "require": require}
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key, algorithms=list(algorithms), options=options, issuer=issuer, audience=audience
        )
    except jwt.InvalidTokenError as error:
        # PyJWT's messages name the claim or the step that failed, never the token.
        raise TokenInvalid(f"invalid token: {error}") from None
    except (TypeError, ValueError):  # e.g. a token that is not text
        raise TokenInvalid("invalid token: malformed") from None
    return claims


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TokenInvalid(f"invalid token: the {name} claim is not a time")
    return float(value)


def _same_name(claimed: Any, name: str) -> str:
    if not isinstance(claimed, str) or not claimed:
        raise TokenInvalid("invalid token: it names no account")
    if claimed.casefold() != name.casefold():
        raise TokenInvalid("invalid token: it is another account's")
    return claimed


class SessionTokens:
    """Issues and checks Parlour's session tokens: HS256 under ``secret``, valid ``ttl`` seconds."""

    __slots__ = ("_secret", "ttl")

    def __init__(self, secret: bytes, ttl: float) -> None:
        if len(secret) < HMAC_KEY_BYTES[SESSION_ALGORITHM]:
            raise ValueError(f"a session secret has at least {HMAC_KEY_BYTES[SESSION_ALGORITHM]} bytes")
        if not ttl > 0:
            raise ValueError(f"a session lasts a positive time, not {ttl}")
        self._secret = secret
        self.ttl = ttl

    def __repr__(self) -> str:
        return f"SessionTokens(ttl={self.ttl})"  # never the secret

    def issue(
        self, account_id: int, name: str, now: float, revision: int = 0, purpose: str = "", ttl: float = 0.0
    ) -> tuple[str, float]:
        """A token for the account, and when it expires.

        The times are whole seconds, as most JWT readers expect; the expiry is rounded down,
        so a token never lasts longer than ``ttl``. ``revision`` is the account's revocation
        counter (the ``rev`` claim): the token holds only while the counter has that value.
        ``purpose`` (the ``use`` claim) marks a token for one thing alone (``"reset"``: a
        password reset); a session token has none, and a token with one never signs in.
        ``ttl``, when given, is this token's life instead of the sessions'.
        """
        if account_id <= 0:
            raise ValueError(f"account ids are positive, not {account_id}")
        expiry = float(math.floor(now + (ttl or self.ttl)))
        claims: dict[str, Any] = {
            "sub": str(account_id),
            "name": name,
            "iat": math.floor(now),
            "exp": int(expiry),
            "iss": ISSUER,
            # A random id: two tokens issued in the same second still differ (and one could be
            # revoked by its id).
            "jti": secrets.token_urlsafe(16),
            "rev": revision,
        }
        if purpose:
            claims["use"] = purpose
        return jwt.encode(claims, self._secret, algorithm=SESSION_ALGORITHM), expiry

    def verify(self, token: str, name: str, now: float) -> tuple[int, str]:
        """The account id and name (as the token spells it) of a valid token for ``name``
        (compared case-insensitively); TokenInvalid or TokenExpired otherwise."""
        account_id, claimed, _ = self.read(token, now, name)
        return account_id, claimed

    def read(
        self, token: str, now: float, name: str | None = None, purpose: str = ""
    ) -> tuple[int, str, int]:
        """The account id, name and revocation counter of a valid token (for ``name``, when
        given, compared case-insensitively; made for ``purpose``: "" is a session's);
        TokenInvalid or TokenExpired otherwise. Whether the counter is still the account's is
        the caller's to check (it keeps the accounts)."""
        claims = _decode(token, self._secret, [SESSION_ALGORITHM], SESSION_CLAIMS, ISSUER)
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject.isdecimal() or int(subject) <= 0:
            raise TokenInvalid("invalid token: it names no account")
        claimed = claims["name"]
        if name is not None:
            claimed = _same_name(claimed, name)
        elif not isinstance(claimed, str) or not claimed:
            raise TokenInvalid("invalid token: it names no account")
        if claims.get("use", "") != purpose:
            raise TokenInvalid("invalid token: not made for this")
        # Tokens issued before revocation counters existed carry none: the counter's first value.
        revision = claims.get("rev", 0)
        if isinstance(revision, bool) or not isinstance(revision, int):
            raise TokenInvalid("invalid token: the rev claim is not a number")
        expiry = _number(claims, "exp")
        assert expiry is not None  # required above
        if now >= expiry:
            raise TokenExpired("the token has expired: log in again")
        return int(subject), claimed, revision


class ExternalJwt:
    """Checks the JWTs of a deployment's own OAuth2/OIDC provider.

    ``key`` is the shared secret for HS* algorithms, or the provider's PEM public key for RS*,
    PS*, ES* and EdDSA (which need the ``cryptography`` package). One kind or the other, never
    both: a public key accepted as an HMAC secret would let anyone who has it sign tokens.
    ``issuer`` and ``audience``, when given, must match the token's ``iss`` and ``aud``; a token
    that names an audience is refused when no audience is configured. ``exp`` is required,
    ``nbf`` honoured, both against ``now`` with ``leeway`` seconds for the provider's clock.
    """

    __slots__ = ("_key", "algorithms", "audience", "issuer", "leeway", "name_claim")

    def __init__(
        self,
        key: str,
        algorithms: list[str],
        issuer: str | None = None,
        audience: str | None = None,
        name_claim: str = "preferred_username",
        leeway: float = 0.0,
    ) -> None:
        if not key:
            raise ValueError("an external JWT key is required")
        if not algorithms:
            raise ValueError("name at least one JWT algorithm")
        unknown = [a for a in algorithms if a not in HMAC_KEY_BYTES and a not in PUBLIC_KEY_ALGORITHMS]
        if unknown:
            raise ValueError(f"unknown JWT algorithm {unknown[0]!r}")
        hmac = [a for a in algorithms if a in HMAC_KEY_BYTES]
        if hmac and len(hmac) != len(algorithms):
            raise ValueError("JWT algorithms are all HS* (a shared secret) or none (a public key)")
        if not name_claim:
            raise ValueError("name the claim that holds the account name")
        if leeway < 0:
            raise ValueError("the leeway must not be negative")
        prepared: Any
        if hmac:
            prepared = key.encode()
            shortest = max(HMAC_KEY_BYTES[a] for a in hmac)
            if len(prepared) < shortest:
                raise ValueError(f"an {'/'.join(hmac)} secret has at least {shortest} bytes")
        else:
            prepared = self._public_key(key, algorithms)
        self._key = prepared
        self.algorithms = list(algorithms)
        self.issuer = issuer or None
        self.audience = audience or None
        self.name_claim = name_claim
        self.leeway = leeway

    @staticmethod
    def _public_key(key: str, algorithms: list[str]) -> Any:
        """The PEM key parsed once, now, so a bad key stops the server at start."""
        parsed: Any = None
        for name in algorithms:
            try:
                algorithm = jwt.get_algorithm_by_name(name)
            except NotImplementedError:
                raise ValueError(
                    f"the {name} JWT algorithm needs the cryptography package (pip install 'PyJWT[crypto]')"
                ) from None
            try:
                parsed = algorithm.prepare_key(key)
            except (ValueError, TypeError, jwt.InvalidKeyError) as error:
                raise ValueError(f"the JWT key is not a PEM public key for {name}: {error}") from None
        return parsed

    @classmethod
    def from_settings(cls, settings: Settings) -> ExternalJwt | None:
        """The checker the ``auth_jwt_*`` settings describe; None when no key is set (Parlour's
        own accounts only)."""
        if not settings.auth_jwt_key:
            return None
        return cls(
            settings.auth_jwt_key,
            [name.strip() for name in settings.auth_jwt_algorithms.split(",") if name.strip()],
            issuer=settings.auth_jwt_issuer or None,
            audience=settings.auth_jwt_audience or None,
            name_claim=settings.auth_jwt_name_claim,
        )

    def __repr__(self) -> str:
        return (
            f"ExternalJwt(algorithms={self.algorithms!r}, issuer={self.issuer!r}, "
            f"audience={self.audience!r}, name_claim={self.name_claim!r})"
        )  # never the key

    def verify(self, token: str, name: str, now: float) -> str:
        """The account name (as the token spells it) of a valid token for ``name`` (compared
        case-insensitively); TokenInvalid or TokenExpired otherwise."""
        claims = _decode(
            token, self._key, self.algorithms, ["exp"], issuer=self.issuer, audience=self.audience
        )
        claimed = _same_name(claims.get(self.name_claim), name)
        expiry = _number(claims, "exp")
        assert expiry is not None  # required above
        start = _number(claims, "nbf")
        if start is not None and now + self.leeway < start:
            raise TokenInvalid("invalid token: not valid yet")
        if now - self.leeway >= expiry:
            raise TokenExpired("the token has expired: log in again")
        return claimed
