"""The command line: help, version, the URL to open, and the serve command's process set-up."""

from __future__ import annotations

import gc
import subprocess
import time
import urllib.request
from dataclasses import fields
from importlib.metadata import version

import pytest

from parlour.app import _collector_paused, browser_url
from parlour.cli import GC_THRESHOLDS, _tune_gc, main
from parlour.settings import CHOICES, HELP, Settings
from tests.processes import clean_env, free_port, serve_command


def test_the_server_collects_garbage_less_often_and_freezes_its_start_up_objects() -> None:
    before = gc.get_threshold()
    try:
        _tune_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
        assert GC_THRESHOLDS[0] > before[0]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_collector_pauses_while_the_store_is_restored_and_only_then() -> None:
    assert gc.isenabled()
    with _collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # turned off by someone else: left off
    try:
        with _collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), _collector_paused():
        raise RuntimeError("a restore that fails")
    assert gc.isenabled()


def test_every_serve_flag_has_a_sentence_its_choices_and_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert set(HELP) == {field.name for field in fields(Settings)}  # a new setting needs its sentence
    with pytest.raises(SystemExit) as exit:
        main(["serve", "--help"])
    assert exit.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere
    for field in fields(Settings):
        flag = f"--{field.name.replace('_', '-')}"
        assert flag in text
        assert " ".join(HELP[field.name].split()) in text
    for name, choices in CHOICES.items():
        assert f"One of: {', '.join(choices)}." in text, name
    assert (
        "--fish-robot {random,greedy,search,shallow,alphabeta,easy,normal,hard}" in text
        and "--tsuro-deal {cyclic,random}" in text
    )
    assert "--websocket-idle SECONDS" in text and "--fish-port PORT" in text and "(default: 8080)" in text


def test_the_log_level_flag_takes_either_case_and_refuses_others(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--log-level", "loud"])
    assert "invalid choice: 'LOUD'" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.strip() == f"parlour {version('parlour')}"


def test_the_browser_url_is_one_that_opens() -> None:
    assert browser_url("127.0.0.1", 8080) == "http://127.0.0.1:8080/"
    assert browser_url("0.0.0.0", 9000) == "http://127.0.0.1:9000/"
    assert browser_url("::1", 8080) == "http://[::1]:8080/"
    assert browser_url("games.example.org", 80) == "http://games.example.org:80/"


def test_serve_says_which_url_to_open_once_it_listens() -> None:
    port = free_port()
    process = subprocess.Popen(
        serve_command(port), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=clean_env()
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 20
        lines = []
        while time.monotonic() < deadline:
            line = process.stdout.readline().decode()
            lines.append(line)
            if "in a browser" in line or not line:
                break
        assert f"open http://127.0.0.1:{port}/ in a browser to play" in lines[-1], lines
        # It is said once the listener is bound: the URL answers now.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
