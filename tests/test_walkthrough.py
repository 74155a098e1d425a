"""The walk-through (`docs/walkthrough.md`), run as a newcomer runs it: `finplat migrate` and
`finplat demo` on a fresh database, a real `finplat serve`, and every `curl` and `export` command
of the walk-through executed as written by bash, curl and python3, in order, in a folder holding
the repository's `examples/` (the ids flow through the walk-through's own `export` lines).

Every call must succeed (2xx) with an answer the sensitive-data scanner finds clean, and the
outcomes the walk-through promises must hold, so a renamed field, a changed id or a step that
no longer works fails here instead of on a reader."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.databases import scratch_database
from tests.factories import user_payload
from tests.processes import environment, run_cli, served
from tests.sensitive_data import find

ROOT = Path(__file__).resolve().parents[1]
WALKTHROUGH = ROOT / "docs" / "walkthrough.md"
COMMAND_TIMEOUT_SECONDS = 30
# The command's own `-s` stays; curl reports transport errors and writes the status code on
# standard error, so that the answer on standard output reaches the command's pipes untouched.
CURL = 'curl() { command curl -sS --max-time 20 -w "%{stderr}\\n%{http_code}" "$@"; }\n'
# The system's tools first, as a newcomer's shell has them; the interpreter running the tests
# last, for `python3` where the system has none.
PATH = f"/usr/bin:/bin:{Path(sys.executable).parent}"
SET_BY_THE_TEST = {"KEY", "API"}
IDS = {"ACCOUNT", "BUDGET", "PAYEE", "APPROVAL", "BATCH", "PAYOUT", "QUOTE", "TOKEN"}


@dataclass(frozen=True)
class Answer:
    method: str
    path: str
    status: int
    body: Any


def walkthrough_commands() -> list[str]:
    """The walk-through's commands in order: each starts a line with `curl` or `export` and
    runs on until the next one or the end of its code block (continuations, multi-line JSON
    and trailing comments included)."""
    walkthrough = WALKTHROUGH.read_text()
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", walkthrough, flags=re.DOTALL):
        block_commands: list[str] = []
        for line in block.splitlines():
            if line.startswith(("curl ", "export ")):
                block_commands.append(line)
            elif block_commands:
                block_commands[-1] += "\n" + line
        commands += block_commands
    return [c for c in commands if _exported(c) not in SET_BY_THE_TEST]


def _exported(command: str) -> str | None:
    match = re.match(r"export (\w+)=", command)
    return match.group(1) if match else None


def _method(command: str) -> str:
    match = re.search(r"-X (\w+)", command)
    if match:
        return match.group(1)
    return "POST" if re.search(r"\s-[dF] ", command) else "GET"


async def _bash(script: str, cwd: Path, variables: dict[str, str]) -> tuple[str, str]:
    """Standard output and standard error of `script`, which must succeed."""
    proc = await asyncio.create_subprocess_exec(
        "bash",
        "-o",
        "pipefail",
        "-c",
        script,
        cwd=cwd,
        env={"PATH": PATH, **variables},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=COMMAND_TIMEOUT_SECONDS)
    assert proc.returncode == 0, f"{script}\n{err.decode()}"
    return out.decode(), err.decode()


async def _run(command: str, cwd: Path, variables: dict[str, str]) -> Answer:
    name = _exported(command)
    if name is not None:
        exported, _ = await _bash(f'{command}\nprintf %s "${name}"', cwd, variables)
        assert exported, command
        variables[name] = exported
        return Answer("export", name, 0, exported)
    text, err = await _bash(CURL + command, cwd, variables)
    status = err.rstrip("\n").rpartition("\n")[2]
    url = re.search(r"\$API(/[^\s\"'?]*)", command)
    assert url is not None, command
    path = re.sub(r"\$(\w+)", lambda m: variables.get(m.group(1), m.group(0)), url.group(1))
    answer = Answer(_method(command), urlsplit(path).path, int(status), json.loads(text or "null"))
    assert 200 <= answer.status < 300, f"{command}\n-> {answer.status} {text}"
    assert find(text, answer.path) == []  # no card number, CVV, PIN, SSN, key or secret
    return answer


def _the(answers: list[Answer], method: str, path: str) -> Any:
    """The body of the last answer to `method path`."""
    return [a for a in answers if (a.method, a.path) == (method, path)][-1].body


async def test_every_step_of_the_walkthrough_works_against_finplat_serve(
    tmp_path: Path,
) -> None:
    assert shutil.which("curl"), "the walk-through needs curl"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    commands = walkthrough_commands()
    async with scratch_database("walkthrough") as url:
        env = environment(url)
        await run_cli(env, "migrate", cwd=tmp_path)
        _, demo, _ = await run_cli(env, "demo", cwd=tmp_path)
        key = re.search(r"API key: +(\S+)", demo)
        assert key is not None, demo
        async with served(env, cwd=tmp_path) as (base_url, _server):
            variables = {"KEY": key.group(1), "API": base_url}
            answers = [await _run(command, tmp_path, variables) for command in commands]
        await run_cli(env, "ledger", "verify", cwd=tmp_path)

    assert set(variables) >= IDS
    user = _the(answers, "POST", "/api/v2/users")
    assert (user["Id"], user["KycStatus"]) == (1, "NOT_STARTED")
    created = _the(answers, "POST", "/api/v2/banking/payouts")
    assert created["PayoutId"] == created["TransactionId"] == int(variables["PAYOUT"])
    payout = _the(answers, "GET", f"/api/v2/transactions/{variables['PAYOUT']}")
    assert (payout["Type"], payout["Status"]) == ("PAYOUT", "COMPLETED")
    assert _the(answers, "POST", "/api/v2/banking/trades/execute")["Status"] == "COMPLETED"
    balances = _the(answers, "GET", "/api/v2/company/balances")["Balances"]
    assert {(b["Currency"], b["Posted"]) for b in balances} == {("USD", 25000), ("EUR", 50)}
    ordered = _the(answers, "POST", "/api/v2/cards")
    assert (ordered["Id"], ordered["Status"]) == (1, "PENDING")
    listed = _the(answers, "GET", "/api/v2/cards")["Cards"]
    assert [(c["Id"], c["Status"], c["cardNo"], c["cvv"]) for c in listed] == [
        (1, "ACTIVE", "", "***")
    ]
    topup = _the(answers, "POST", "/api/v2/cards/topup")
    assert (topup["Success"], topup["Fee"]) == (True, 1)  # 1 % of 100.00
    unload = _the(answers, "POST", "/api/v2/cards/unload-card")
    assert (unload["Status"], unload["NetAmount"]) == ("COMPLETED", 20)
    movements = _the(answers, "GET", "/api/v2/cards/1/transactions")["Items"]
    assert {(m["Type"], m["Amount"]) for m in movements} == {("CLEARING", 12.5), ("LOAD", 99)}
    assert _the(answers, "POST", "/api/v2/cards/1/freeze")["Status"] == "FROZEN"
    assert _the(answers, "POST", "/api/v2/cards/1/enable")["Status"] == "ACTIVE"
    assert _the(answers, "POST", "/api/v2/cards/1/pin") == {"CardId": 1, "PinSet": True}
    this_month = _the(answers, "GET", "/api/v2/cards/1/auto-topup")["CurrentMonth"]
    assert (this_month["Count"], this_month["Amount"]) == (1, 25)  # the deposit's top-up
    cancelled = _the(answers, "DELETE", "/api/v2/cards/1")
    assert (cancelled["Status"], cancelled["AvailableBalance"]) == ("CANCELLED", 0)
    events = _the(answers, "GET", "/api/v2/events")["Items"]
    deleted = [e["Data"] for e in events if e["Type"] == "card.deleted"]
    assert [(d["cardId"], d["newStatus"]) for d in deleted] == [(1, "CANCELLED")]


async def test_the_walkthrough_error_example_is_what_the_api_answers(
    api: httpx.AsyncClient,
) -> None:
    walkthrough = WALKTHROUGH.read_text()
    example = re.search(r"```json\n(.*?)```", walkthrough, flags=re.DOTALL)
    assert example is not None
    assert '`"Phone": "+44 7911 123456"`' in walkthrough
    response = await api.post("/api/v2/users", json=user_payload(Phone="+44 7911 123456"))
    assert response.json() == json.loads(example.group(1))


def _idempotent_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    """(method, path template) of every operation that takes an `Idempotency-Key` header."""
    return {
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
    }


def _template(path: str, templates: set[str]) -> str | None:
    for template in templates:
        if re.fullmatch(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)), path):
            return template
    return None


async def test_the_walkthrough_names_and_sends_an_idempotency_key_on_every_call_that_takes_one(
    anonymous: httpx.AsyncClient,
) -> None:
    operations = _idempotent_operations((await anonymous.get("/openapi.json")).json())
    walkthrough = WALKTHROUGH.read_text()
    listed = re.search(r"take an `Idempotency-Key` header.*?\n\n", walkthrough, flags=re.DOTALL)
    assert listed is not None
    named = set(re.findall(r"`(POST|PUT|DELETE) (/api/v2/[^`]+)`", listed.group(0)))
    assert named == operations
    templates = {path for _, path in operations}
    for command in walkthrough_commands():
        url = re.search(r"\$API(/[^\s\"'?]*)", command)
        if url is None:
            continue
        path = urlsplit(url.group(1)).path
        template = _template(path, templates)
        if template is not None and (_method(command), template) in operations:
            assert "-H 'Idempotency-Key: " in command, command
