"""Run schemathesis (the CLI, in its own process) against an app served on loopback."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    phases: str

    def without(self, phase: str) -> Profile:
        kept = ",".join(p for p in self.phases.split(",") if p != phase)
        return Profile(self.name, self.max_examples, kept)


QUICK = Profile("quick", max_examples=25, phases="examples,coverage,fuzzing")
LONG = Profile("long", max_examples=400, phases="examples,coverage,fuzzing,stateful")


def profile() -> Profile:
    return LONG if os.environ.get("FINPLAT_FUZZ_PROFILE") == "long" else QUICK


def seed() -> int:
    given = os.environ.get("FINPLAT_FUZZ_SEED")
    return int(given) if given else random.randrange(2**31)


@dataclass(frozen=True)
class Outcome:
    returncode: int
    output: str
    seed: int


async def run_schemathesis(
    base_url: str, api_key: str, *, chosen: Profile, seed_: int, extra: tuple[str, ...] = ()
) -> Outcome:
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "NO_COLOR": "1",
    }
    args = [
        "run",
        f"{base_url}/openapi.json",
        "--header",
        f"x-api-key: {api_key}",
        "--mode",
        "all",
        "--phases",
        chosen.phases,
        "--max-examples",
        str(chosen.max_examples),
        "--seed",
        str(seed_),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--no-color",
        *extra,
    ]
    proc = await asyncio.create_subprocess_exec(
        SCHEMATHESIS,
        *args,
        env=env,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=RUN_TIMEOUT_SECONDS)
    assert proc.returncode is not None
    return Outcome(proc.returncode, out.decode(errors="replace"), seed_)
