"""The fuzzing runner itself (`tests/fuzz/runner.py`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.fuzz.runner import FuzzRunTimedOut, Profile, run_schemathesis


async def test_a_fuzz_run_past_its_time_is_stopped_and_names_its_seed() -> None:
    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the stopped fuzzer's connection closes
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    brief = Profile("brief", max_examples=1, phases="examples", timeout_seconds=2)
    started = time.monotonic()
    async with server:
        with pytest.raises(FuzzRunTimedOut, match=r"brief profile, seed 7\) ran past 2 s"):
            await run_schemathesis(f"http://127.0.0.1:{port}", "key", chosen=brief, seed_=7)
    assert time.monotonic() - started < 15
