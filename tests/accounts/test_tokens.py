"""Session tokens and an external provider's JWTs, checked against an injected ``now``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import warnings
from typing import Any

import jwt
import pytest

from parlour.accounts import ExternalJwt, SessionTokens, TokenExpired, TokenInvalid
from parlour.settings import Settings

SECRET = bytes(range(32))
NOW = 1_000_000.25
TTL = 3600.0


@pytest.fixture
def tokens() -> SessionTokens:
    return SessionTokens(SECRET, TTL)


def _claims(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# ---------------------------------------------------------------------------------------------
# Parlour's own session tokens


def test_a_token_verifies_for_its_account_until_it_expires(tokens: SessionTokens) -> None:
    token, expiry = tokens.issue(42, "Ann", NOW)
    assert expiry == float(int(NOW + TTL))  # whole seconds, rounded down
    claims = _claims(token)
    assert claims["sub"] == "42" and claims["name"] == "Ann" and claims["iss"] == "parlour"
    assert (claims["iat"], claims["exp"]) == (int(NOW), int(expiry))
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16
    assert tokens.verify(token, "Ann", NOW) == (42, "Ann")
    assert tokens.verify(token, "aNN", expiry - 0.001) == (42, "Ann")  # names in any case
    with pytest.raises(TokenExpired):
        tokens.verify(token, "Ann", expiry)
    with pytest.raises(TokenExpired):
        tokens.verify(token, "Ann", expiry + 10 * TTL)


def test_the_wall_clock_plays_no_part(tokens: SessionTokens) -> None:
    # Issued "in 2286" and "in 1970": only ``now`` decides.
    future, _ = tokens.issue(1, "ann", 1e10)
    assert tokens.verify(future, "ann", 1e10 + 1) == (1, "ann")
    past, _ = tokens.issue(1, "ann", 1000.0)
    assert tokens.verify(past, "ann", 1001.0) == (1, "ann")


def test_two_tokens_of_the_same_second_differ(tokens: SessionTokens) -> None:
    assert tokens.issue(1, "ann", NOW)[0] != tokens.issue(1, "ann", NOW)[0]


def test_a_token_is_only_its_accounts(tokens: SessionTokens) -> None:
    token, _ = tokens.issue(42, "Ann", NOW)
    with pytest.raises(TokenInvalid, match="another account's"):
        tokens.verify(token, "Bob", NOW)


def test_a_tampered_token_is_invalid(tokens: SessionTokens) -> None:
    token, _ = tokens.issue(42, "Ann", NOW)
    header, payload, signature = token.split(".")
    forged = _b64(json.dumps({**_claims(token), "sub": "1"}).encode())
    with pytest.raises(TokenInvalid, match="Signature verification failed"):
        tokens.verify(f"{header}.{forged}.{signature}", "Ann", NOW)
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    with pytest.raises(TokenInvalid):
        tokens.verify(f"{header}.{payload}.{flipped}", "Ann", NOW)
    with pytest.raises(TokenInvalid):
        SessionTokens(bytes(32), TTL).verify(token, "Ann", NOW)  # another store's secret


def _signed(claims: dict[str, Any], key: bytes | str = SECRET, algorithm: str = "HS256") -> str:
    return jwt.encode(claims, key, algorithm=algorithm)


def _quietly_signed(claims: dict[str, Any], algorithm: str) -> str:
    """Signed with a secret too short for ``algorithm`` (PyJWT warns; that is the point)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _signed(claims, algorithm=algorithm)


def _session_claims(**changes: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "sub": "42",
        "name": "Ann",
        "iat": int(NOW),
        "exp": int(NOW + TTL),
        "iss": "parlour",
        "jti": "abcdefghijklmnop",
    }
    claims.update(changes)
    return {key: value for key, value in claims.items() if value is not None}


def test_a_well_formed_token_passes(tokens: SessionTokens) -> None:
    assert tokens.verify(_signed(_session_claims()), "ann", NOW) == (42, "Ann")


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        (_session_claims(iss="elsewhere"), "Invalid issuer"),
        (_session_claims(iss=None), "iss"),
        (_session_claims(jti=None), "jti"),
        (_session_claims(exp=None), "exp"),
        (_session_claims(name=None), "name"),
        (_session_claims(sub="ann"), "names no account"),
        (_session_claims(sub="0"), "names no account"),
        (_session_claims(sub="-4"), "names no account"),
        (_session_claims(name=7), "names no account"),
        (_session_claims(exp="tomorrow"), "not a time"),
        (_session_claims(aud="someone"), "audience"),
    ],
    ids=[
        "wrong-issuer",
        "no-issuer",
        "no-jti",
        "no-exp",
        "no-name",
        "sub-not-a-number",
        "sub-zero",
        "sub-negative",
        "name-not-text",
        "exp-not-a-time",
        "audience",
    ],
)
def test_a_token_missing_or_bending_a_claim_is_invalid(
    tokens: SessionTokens, claims: dict[str, Any], problem: str
) -> None:
    with pytest.raises(TokenInvalid, match=problem):
        tokens.verify(_signed(claims), "Ann", NOW)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "abc",
        "a.b.c",
        "x" * 1000,
        _quietly_signed(_session_claims(), algorithm="HS512"),  # the right secret, another algorithm
        _b64(b'{"alg":"none","typ":"JWT"}') + "." + _b64(json.dumps(_session_claims()).encode()) + ".",
    ],
    ids=["empty", "one-part", "garbage", "long", "hs512", "alg-none"],
)
def test_malformed_or_unsigned_tokens_are_invalid(tokens: SessionTokens, token: str) -> None:
    with pytest.raises(TokenInvalid) as refused:
        tokens.verify(token, "Ann", NOW)
    assert str(refused.value).startswith("invalid token")


def test_session_tokens_refuse_a_short_secret_a_bad_ttl_and_hide_the_secret() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        SessionTokens(bytes(31), TTL)
    with pytest.raises(ValueError, match="positive"):
        SessionTokens(SECRET, 0.0)
    with pytest.raises(ValueError, match="positive"):
        SessionTokens(SECRET, TTL).issue(0, "robot", NOW)
    assert repr(SessionTokens(b"\xab" * 32, TTL)) == "SessionTokens(ttl=3600.0)"


# ---------------------------------------------------------------------------------------------
# An external provider's JWTs: a shared secret (HS256)

SHARED = "a shared secret of the provider, 32+ bytes long"


def _provider_claims(**changes: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "sub": "provider-user-1",
        "preferred_username": "Ann",
        "iss": "https://id.example",
        "aud": "parlour",
        "iat": int(NOW),
        "exp": int(NOW) + 300,
    }
    claims.update(changes)
    return {key: value for key, value in claims.items() if value is not None}


@pytest.fixture
def provider() -> ExternalJwt:
    return ExternalJwt(SHARED, ["HS256"], issuer="https://id.example", audience="parlour")


def test_a_providers_token_gives_the_name_it_holds(provider: ExternalJwt) -> None:
    token = _signed(_provider_claims(), SHARED)
    assert provider.verify(token, "ann", NOW) == "Ann"
    with pytest.raises(TokenExpired):
        provider.verify(token, "Ann", NOW + 300)
    with pytest.raises(TokenInvalid, match="another account's"):
        provider.verify(token, "Bob", NOW)


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        (_provider_claims(iss="https://evil.example"), "Invalid issuer"),
        (_provider_claims(aud="another-app"), "(?i)audience"),
        (_provider_claims(aud=None), "aud"),
        (_provider_claims(exp=None), "exp"),
        (_provider_claims(preferred_username=None), "names no account"),
        (_provider_claims(nbf=int(NOW) + 60), "not valid yet"),
    ],
    ids=["issuer", "audience", "no-audience", "no-exp", "no-name", "not-yet"],
)
def test_a_providers_token_must_meet_every_check(
    provider: ExternalJwt, claims: dict[str, Any], problem: str
) -> None:
    with pytest.raises(TokenInvalid, match=problem):
        provider.verify(_signed(claims, SHARED), "Ann", NOW)


def test_without_an_issuer_or_audience_configured(provider: ExternalJwt) -> None:
    open_provider = ExternalJwt(SHARED, ["HS256"], name_claim="nickname")
    token = _signed(_provider_claims(aud=None, iss="anyone", nickname="Cat"), SHARED)
    assert open_provider.verify(token, "cat", NOW) == "Cat"
    # A token meant for some audience is not taken when Parlour was told of none.
    with pytest.raises(TokenInvalid, match="audience"):
        open_provider.verify(_signed(_provider_claims(nickname="Cat"), SHARED), "cat", NOW)


def test_the_leeway_covers_the_providers_clock() -> None:
    lenient = ExternalJwt(SHARED, ["HS256"], audience="parlour", leeway=30.0)
    token = _signed(_provider_claims(nbf=int(NOW) + 20), SHARED)
    assert lenient.verify(token, "Ann", NOW) == "Ann"
    assert lenient.verify(token, "Ann", NOW + 300 + 29) == "Ann"
    with pytest.raises(TokenExpired):
        lenient.verify(token, "Ann", NOW + 300 + 30)


@pytest.mark.parametrize(
    ("key", "algorithms", "problem"),
    [
        ("", ["HS256"], "key is required"),
        (SHARED, [], "at least one"),
        (SHARED, ["none"], "unknown JWT algorithm 'none'"),
        (SHARED, ["HS256", "RS256"], "all HS"),
        ("short", ["HS256"], "at least 32 bytes"),
        (SHARED, ["HS512"], "at least 64 bytes"),
    ],
)
def test_a_provider_that_cannot_be_checked_safely_is_refused(
    key: str, algorithms: list[str], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        ExternalJwt(key, algorithms)


def test_the_provider_is_built_from_settings_and_hides_its_key() -> None:
    assert ExternalJwt.from_settings(Settings()) is None
    settings = Settings(
        auth_jwt_key=SHARED,
        auth_jwt_algorithms="HS256",
        auth_jwt_issuer="https://id.example",
        auth_jwt_audience="parlour",
        auth_jwt_name_claim="preferred_username",
    )
    provider = ExternalJwt.from_settings(settings)
    assert provider is not None
    assert provider.verify(_signed(_provider_claims(), SHARED), "Ann", NOW) == "Ann"
    assert SHARED not in repr(provider)


# ---------------------------------------------------------------------------------------------
# An external provider's JWTs: a public key (RS256), when ``cryptography`` is installed

HAS_CRYPTOGRAPHY = importlib.util.find_spec("cryptography") is not None
PEM = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n"


@pytest.mark.skipif(HAS_CRYPTOGRAPHY, reason="cryptography is installed")
def test_public_key_algorithms_say_they_need_cryptography() -> None:
    with pytest.raises(ValueError, match=r"needs the cryptography package"):
        ExternalJwt(PEM, ["RS256"])


@pytest.mark.skipif(not HAS_CRYPTOGRAPHY, reason="cryptography is not installed")
def test_an_rs256_provider() -> None:  # pragma: no cover - only where cryptography is
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    provider = ExternalJwt(public_pem, ["RS256"], issuer="https://id.example", audience="parlour")
    assert provider.verify(_signed(_provider_claims(), private, "RS256"), "ann", NOW) == "Ann"
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(TokenInvalid):
        provider.verify(_signed(_provider_claims(), other, "RS256"), "ann", NOW)
    # The algorithm-confusion forgery: the public key used as an HMAC secret.
    signed = _b64(b'{"alg":"HS256","typ":"JWT"}') + "." + _b64(json.dumps(_provider_claims()).encode())
    mac = hmac.new(public_pem.encode(), signed.encode(), hashlib.sha256).digest()
    forged = f"{signed}.{_b64(mac)}"
    with pytest.raises(TokenInvalid):
        provider.verify(forged, "ann", NOW)
    with pytest.raises(ValueError, match="not a PEM public key"):
        ExternalJwt(PEM, ["RS256"])
