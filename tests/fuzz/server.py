"""The server under fuzz: a real ``parlour serve`` subprocess with every listener on free loopback
ports, its store in a temporary directory and its log in a file the oracle reads afterwards."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.processes import BIN, clean_env, free_port, running, serve_command

__all__ = ["FuzzServer", "fuzz_server", "log_problems"]

#: Settings that keep the fuzz about the server rather than about its limits: robots that decide
#: at once (thousands of tables are abandoned to them), tables that fill with robots quickly, and
#: an /async rate limit the fuzz clients, which send two frames per case, stay under.
FUZZ_FLAGS = (
    "--robot",
    "random",
    "--fish-robot",
    "random",
    "--tsuro-robot",
    "random",
    "--fish-wait",
    "2",
    "--tsuro-wait",
    "2",
    "--async-requests-per-second",
    "100000",
    "--log-level",
    "INFO",
)
#: Per-connection and per-address request limits, where this build has them: a fuzz client sends
#: two frames per case, as fast as the server answers, from one loopback address.
LIMIT_FLAGS = {
    "--requests-per-second": "1000000",
    "--address-requests-per-second": "1000000",
    "--max-connections-per-address": "100000",
}


def _limit_flags() -> list[str]:
    """The LIMIT_FLAGS that ``parlour serve`` knows (older builds refuse unknown flags)."""
    done = subprocess.run(
        [str(BIN / "parlour"), "serve", "--help"], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    return [part for flag, value in LIMIT_FLAGS.items() if flag in done.stdout for part in (flag, value)]


@dataclass
class FuzzServer:
    process: subprocess.Popen[bytes]
    port: int
    fish_port: int
    tsuro_port: int
    store: Path
    log: Path

    def rss_kib(self) -> int:
        """The server process's resident set, from /proc (0 once it has gone)."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0


@contextmanager
def fuzz_server(directory: Path, *extra: str) -> Iterator[FuzzServer]:
    """A server for the block; stopped gracefully after it (SIGTERM, as an operator would)."""
    port, fish_port, tsuro_port = free_port(), free_port(), free_port()
    store, log = directory / "fuzz.db", directory / "server.log"
    command = serve_command(port, *FUZZ_FLAGS, *_limit_flags(), *extra, store=str(store))
    # serve_command turns the TCP listeners off; later flags win, so turn them on again.
    command += ["--fish-port", str(fish_port), "--tsuro-port", str(tsuro_port)]
    with log.open("wb") as output, running(command, port, output, clean_env()) as process:
        yield FuzzServer(process, port, fish_port, tsuro_port, store, log)


def log_problems(log: Path) -> list[str]:
    """Lines of the server log that no input may cause: tracebacks and ERROR or CRITICAL lines."""
    problems = []
    for line in log.read_text(errors="replace").splitlines():
        if "Traceback" in line or " ERROR " in line or " CRITICAL " in line:
            problems.append(line[:300])
    return problems


def db_check(store: Path) -> tuple[int, str]:
    """``parlour db check`` on the stopped server's store: exit status and output."""
    done = subprocess.run(
        [str(BIN / "parlour"), "db", "check", "--store", str(store)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    return done.returncode, (done.stdout + done.stderr).strip()
