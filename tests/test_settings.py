"""Settings: defaults, then a TOML file, then PARLOUR_* variables, then flags; clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from parlour.cli import build_parser, main
from parlour.settings import SettingError, Settings, load_settings


def test_defaults_are_sized_for_one_machine() -> None:
    settings = Settings()
    assert (settings.host, settings.port, settings.robot) == ("127.0.0.1", 8080, "search")
    assert (settings.max_connections, settings.max_players, settings.max_in_progress_games) == (
        10_000,
        10_000,
        5_000,
    )
    assert (settings.max_message_bytes, settings.max_chat_chars) == (65_536, 500)
    assert (settings.player_idle, settings.player_inactive) == (15 * 60, 30 * 60)


def test_precedence(tmp_path: Path) -> None:
    config = tmp_path / "parlour.toml"
    config.write_text('[parlour]\nport = 9000\nrobot = "random"\nmax_players = 5\n')
    settings = load_settings(config, {"PARLOUR_PORT": "9100", "OTHER": "x"}, {"max_players": 7, "host": None})
    assert (settings.port, settings.robot, settings.max_players, settings.host) == (
        9100,
        "random",
        7,
        "127.0.0.1",
    )


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        ("[parlour]\nportt = 1\n", {}, "unknown setting 'portt'"),
        ("[parlour]\nport = 'x'\n", {}, "port must be a number"),
        ("[parlour]\nrobot = 'smart'\n", {}, "robot must be one of random, greedy"),
        ("", {"PARLOUR_NOPE": "1"}, "unknown setting in environment variable PARLOUR_NOPE"),
        ("", {"PARLOUR_MAX_PLAYERS": "-1"}, "max_players must not be negative"),
        ("[parlour\n", {}, "is not valid TOML"),
    ],
)
def test_errors_name_the_setting(tmp_path: Path, text: str, environ: dict[str, str], message: str) -> None:
    config = tmp_path / "parlour.toml"
    config.write_text(text)
    with pytest.raises(SettingError, match=message):
        load_settings(config, environ)


def test_every_setting_has_a_flag() -> None:
    args = build_parser().parse_args(["serve", "--max-in-progress-games", "3", "--player-idle", "1.5"])
    assert args.max_in_progress_games == 3 and args.player_idle == 1.5
    assert args.port is None  # unset flags leave lower layers alone


def test_serve_reports_bad_settings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["serve", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_account_settings_defaults() -> None:
    settings = Settings()
    assert settings.session_ttl == 30 * 24 * 3600
    assert (settings.auth_jwt_key, settings.jwt_algorithms(), settings.auth_jwt_name_claim) == (
        "",
        ["RS256"],
        "preferred_username",
    )
    assert (settings.auth_jwt_issuer, settings.auth_jwt_audience) == ("", "")
    assert (
        settings.login_failures_per_name,
        settings.login_failures_per_address,
        settings.login_window,
    ) == (5, 20, 900.0)


def test_the_external_jwt_key_is_read_from_the_environment_and_never_shown() -> None:
    secret = "s3cret-" * 10
    settings = load_settings(
        None,
        {"PARLOUR_AUTH_JWT_KEY": secret, "PARLOUR_AUTH_JWT_ALGORITHMS": "HS256, HS512"},
    )
    assert settings.auth_jwt_key == secret
    assert settings.jwt_algorithms() == ["HS256", "HS512"]
    assert secret not in repr(settings)


PEM = "-----BEGIN PUBLIC KEY-----\nMFkw...\n-----END PUBLIC KEY-----\n"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"session_ttl": 0.0}, "session_ttl must be positive"),
        ({"login_window": 0.0}, "login_window must be positive"),
        ({"login_failures_per_name": -1}, "login_failures_per_name must not be negative"),
        ({"auth_jwt_name_claim": ""}, "auth_jwt_name_claim must name a claim"),
        ({"auth_jwt_algorithms": " , "}, "must name at least one algorithm"),
        ({"auth_jwt_algorithms": "RS256,none"}, "unknown algorithm 'none'"),
        ({"auth_jwt_algorithms": "HS256,RS256"}, "all HS\\* \\(a shared secret\\) or none"),
        ({"auth_jwt_algorithms": "HS512", "auth_jwt_key": "x" * 63}, "at least 64 bytes for HS512"),
        ({"auth_jwt_key": "x" * 100}, "must be a PEM public key for RS256"),
    ],
)
def test_account_settings_errors(values: dict[str, object], message: str) -> None:
    with pytest.raises(SettingError, match=message) as refused:
        Settings(**values)  # type: ignore[arg-type]
    assert "x" * 32 not in str(refused.value)  # never the key


def test_valid_external_jwt_settings() -> None:
    assert Settings(auth_jwt_key=PEM, auth_jwt_algorithms="RS256,ES256").jwt_algorithms() == [
        "RS256",
        "ES256",
    ]
    assert Settings(auth_jwt_key="k" * 32, auth_jwt_algorithms="HS256").auth_jwt_key == "k" * 32
    # Without a key, the algorithms are only checked for their names.
    assert Settings(auth_jwt_algorithms="HS384").jwt_algorithms() == ["HS384"]


def test_the_store_is_a_file_a_postgresql_url_or_none() -> None:
    for store in ("var/parlour.db", "postgresql://ann@db/parlour", "postgres://db/parlour", "none"):
        assert Settings(store=store).store == store
    with pytest.raises(SettingError, match=r"store: mysql:// is not a store"):
        Settings(store="mysql://ann@db/parlour")
