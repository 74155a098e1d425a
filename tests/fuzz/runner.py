"""Run schemathesis (the CLI, in its own process) against an app served on loopback."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from dataclasses import dataclass, replace
from pathlib import Path

SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    phases: str
    timeout_seconds: float  # for one schemathesis run
    fixed_seed: int | None = None  # the seed a run takes unless FINPLAT_FUZZ_SEED names one

    @property
    def stateful(self) -> bool:
        return "stateful" in self.phases.split(",")

    def without(self, phase: str) -> Profile:
        kept = ",".join(p for p in self.phases.split(",") if p != phase)
        return replace(self, phases=kept)


class FuzzRunTimedOut(AssertionError):
    """A schemathesis run went past its profile's time and was stopped."""


# `make test` fuzzes with one seed, so that a run of the suite gives the same answer twice: a
# random seed there once failed CI by finding an old inconsistency in code the change under
# test never touched. Exploring new seeds is `make fuzz`'s job (a random one, printed).
QUICK = Profile(
    "quick",
    max_examples=25,
    phases="examples,coverage,fuzzing",
    timeout_seconds=900,
    fixed_seed=626497368,
)
# 400 examples of each of some 150 operations, and stateful sequences: tens of thousands of
# requests, more than 15 minutes on a 2-core machine (a run was cut there, mid-way, before).
LONG = Profile(
    "long",
    max_examples=400,
    phases="examples,coverage,fuzzing,stateful",
    timeout_seconds=4 * 3600,
)


def profile() -> Profile:
    return LONG if os.environ.get("FINPLAT_FUZZ_PROFILE") == "long" else QUICK


def seed(chosen: Profile) -> int:
    given = os.environ.get("FINPLAT_FUZZ_SEED")
    if given:
        return int(given)
    if chosen.fixed_seed is not None:
        return chosen.fixed_seed
    return random.randrange(2**31)


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
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=chosen.timeout_seconds)
    except TimeoutError:
        proc.kill()  # not left running, and holding the app's server, after the test
        await proc.wait()
        raise FuzzRunTimedOut(
            f"schemathesis ({chosen.name} profile, seed {seed_}) ran past "
            f"{chosen.timeout_seconds:.0f} s and was stopped"
        ) from None
    assert proc.returncode is not None
    return Outcome(proc.returncode, out.decode(errors="replace"), seed_)
