"""Failed-login limits per name and per address: windows, clearing, and bounded memory."""

from __future__ import annotations

import pytest

from parlour.accounts import LoginLimiter
from parlour.accounts.limits import address_key

T = 10_000.0


def test_a_name_waits_once_it_failed_its_limit_within_the_window() -> None:
    limiter = LoginLimiter(per_name=3, per_address=100, window=60.0)
    for offset in (0.0, 10.0, 20.0):
        assert limiter.check("ann", "10.0.0.1", T + offset) == 0.0
        limiter.failed("ann", "10.0.0.1", T + offset)
    # Three failures: the next try waits until the first of them is a window old.
    assert limiter.check("ann", "10.0.0.1", T + 20.0) == 40.0
    assert limiter.check("ANN", "10.0.0.2", T + 59.5) == pytest.approx(0.5)  # any case, any address
    assert limiter.check("ann", "10.0.0.1", T + 60.0) == 0.0
    # One more failure, and the wait runs from the second of the three last ones.
    limiter.failed("ann", "10.0.0.1", T + 60.0)
    assert limiter.check("ann", "10.0.0.1", T + 60.0) == 10.0
    # Other names are not held back.
    assert limiter.check("bob", "10.0.0.3", T + 60.0) == 0.0


def test_a_success_clears_the_names_failures_but_not_the_addresss() -> None:
    limiter = LoginLimiter(per_name=2, per_address=3, window=100.0)
    limiter.failed("ann", "10.0.0.1", T)
    limiter.failed("ann", "10.0.0.1", T + 1)
    assert limiter.check("ann", "10.0.0.9", T + 2) == 98.0
    limiter.succeeded("Ann", "10.0.0.9", T + 2)
    assert limiter.check("ann", "10.0.0.9", T + 2) == 0.0
    # The address tried three names: an own account's success does not reset it.
    limiter.failed("bob", "10.0.0.1", T + 3)
    limiter.succeeded("mallory", "10.0.0.1", T + 4)
    assert limiter.check("mallory", "10.0.0.1", T + 4) == 96.0


def test_an_address_that_sprays_names_waits() -> None:
    limiter = LoginLimiter(per_name=5, per_address=4, window=30.0)
    for number in range(4):
        limiter.failed(f"user{number}", "192.0.2.7", T + number)
    assert limiter.check("someone-else", "192.0.2.7", T + 4) == 26.0
    assert limiter.check("someone-else", "192.0.2.8", T + 4) == 0.0


def test_ipv6_addresses_count_per_64_network() -> None:
    limiter = LoginLimiter(per_name=100, per_address=2, window=30.0)
    limiter.failed("a", "2001:db8:1:2::1", T)
    limiter.failed("b", "2001:db8:1:2:ffff::9", T)
    assert limiter.check("c", "2001:db8:1:2:abcd::1", T) == 30.0
    assert limiter.check("c", "2001:db8:1:3::1", T) == 0.0
    assert address_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert address_key("fe80::1%eth0") == "fe80::/64"
    assert address_key("unix-socket") == "unix-socket"


def test_a_limit_of_zero_is_off() -> None:
    limiter = LoginLimiter(per_name=0, per_address=0, window=30.0)
    for _ in range(50):
        limiter.failed("ann", "10.0.0.1", T)
    assert limiter.check("ann", "10.0.0.1", T) == 0.0
    assert limiter.tracked() == (0, 0)


def test_expired_entries_are_dropped() -> None:
    limiter = LoginLimiter(per_name=3, per_address=3, window=60.0)
    for number in range(100):
        limiter.failed(f"user{number}", f"10.0.{number}.1", T)
    assert limiter.tracked() == (100, 100)
    limiter.failed("late", "10.9.9.9", T + 60.0)  # everything else left the window
    assert limiter.tracked() == (1, 1)


def test_memory_is_capped_dropping_the_keys_that_failed_longest_ago() -> None:
    limiter = LoginLimiter(per_name=2, per_address=1000, window=3600.0, max_keys=10)
    limiter.failed("first", "10.0.0.1", T)
    limiter.failed("first", "10.0.0.1", T + 1)
    for number in range(20):
        limiter.failed(f"user{number}", "10.0.0.1", T + 2 + number)
    assert limiter.tracked() == (10, 1)
    assert limiter.check("first", "10.0.0.2", T + 30) == 0.0  # forgotten
    limiter.failed("user19", "10.0.0.1", T + 30)
    assert limiter.check("user19", "10.0.0.2", T + 30) == pytest.approx(3600.0 - 9.0)
    # Each key keeps only its limit of failure times.
    assert all(len(times) <= 2 for times in limiter._names.keys.values())


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"per_name": -1}, "negative"),
        ({"per_address": -1}, "negative"),
        ({"window": 0.0}, "positive"),
        ({"max_keys": 0}, "at least one"),
    ],
)
def test_bad_limits_are_refused(arguments: dict[str, float], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        LoginLimiter(**arguments)  # type: ignore[arg-type]
