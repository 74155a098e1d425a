"""py-spy on the server over one measured window (`load.drive`'s `at_start`), so that the
profile holds the measured work and neither the setup nor the warm-up."""

from __future__ import annotations

import subprocess

from run_database import ROOT

SPY = str(ROOT / ".venv" / "bin" / "py-spy")
RATE = 200  # samples per second
FORMATS = {".svg": "flamegraph", ".txt": "raw", ".json": "speedscope"}


class Profiler:
    """Records `pid` (and its subprocesses) for `seconds` from `start()` into `output` (a flame
    graph .svg, collapsed stacks .txt or speedscope .json); does nothing without an output.
    `native` adds C frames (the process is paused for each sample, so it runs slower)."""

    def __init__(
        self, pid: int, seconds: float, output: str | None, *, native: bool = False
    ) -> None:
        self.pid = pid
        self.seconds = seconds
        self.output = output
        self.native = native
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if self.output is None:
            return
        kind = next((f for s, f in FORMATS.items() if self.output.endswith(s)), "flamegraph")
        command = [
            SPY, "record", "--subprocesses", "--pid", str(self.pid),
            "--duration", str(max(1, round(self.seconds))), "--rate", str(RATE),
            "--format", kind, "-o", self.output,
        ]  # fmt: skip
        if self.native:
            command.append("--native")
        self.proc = subprocess.Popen(  # noqa: S603
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def wait(self) -> None:
        if self.proc is not None:
            self.proc.wait(timeout=120)
