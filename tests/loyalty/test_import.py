"""Importing past transactions from a CSV file: each row checked, a bad file refused whole
with problem details naming the row, the same file again changing nothing."""

from __future__ import annotations

from typing import Any

import httpx

from tests.factories import user_payload
from tests.loyalty.steps import (
    LOYALTY,
    csv_file,
    import_config,
    merchant,
    new_mid,
    points,
    program,
    upload,
)
from tests.loyalty.test_legacy import assert_problem


async def _setup(api: httpx.AsyncClient, **config: Any) -> tuple[int, int, str]:
    owner = await program(api, PointsPerUnit=1)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    user = (await api.post("/api/v2/users", json=user_payload())).json()
    made = await import_config(api, owner["Id"], **config)
    return made["Id"], user["Id"], mid


async def test_an_import_configuration_is_created_read_and_listed(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api)
    made = await import_config(api, owner["Id"], Delimiter=";")
    assert (made["ProgramId"], made["Delimiter"]) == (owner["Id"], ";")
    assert "TransactionId" in made["Columns"]
    assert (await api.get(f"{LOYALTY}/import-configs/{made['Id']}")).json() == made
    assert (await api.get(f"{LOYALTY}/import-configs")).json()["Items"] == [made]


async def test_a_file_of_past_transactions_earns_their_points(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(
        f"T1,{user_id},{mid},12.50,USD,2026-10-01T10:00:00Z",
        f"T2,{user_id},{mid},7,USD,2026-10-02T10:00:00+01:00",
    )
    response = await upload(api, config_id, text)
    assert response.status_code == 200, response.text
    assert response.json() | {"ConfigId": 0, "ProgramId": 0} == {
        "ConfigId": 0,
        "ProgramId": 0,
        "Rows": 2,
        "Imported": 2,
        "Unchanged": 0,
        "Points": 19,
    }
    assert await points(api, user_id) == 19


async def test_importing_the_same_file_again_changes_nothing(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(f"T1,{user_id},{mid},10,USD,2026-10-01T10:00:00Z")
    await upload(api, config_id, text)
    again = await upload(api, config_id, text)
    assert again.status_code == 200, again.text
    assert (again.json()["Imported"], again.json()["Unchanged"]) == (0, 1)
    assert await points(api, user_id) == 10


async def test_a_bad_row_refuses_the_file_naming_the_row(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(
        f"T1,{user_id},{mid},10,USD,2026-10-01T10:00:00Z",
        f"T2,{user_id},{mid},10.001,USD,2026-10-01T10:00:00Z",
    )
    body = assert_problem(await upload(api, config_id, text), 400, "INVALID_IMPORT_FILE")
    assert "Row 2 (line 3), Amount" in body["detail"]
    assert list(body["errors"]) == ["Row 2 (line 3)"]
    assert await points(api, user_id) == 0


async def test_every_bad_cell_is_named(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(
        f"T 1,{user_id},{mid},10,USD,2026-10-01T10:00:00Z",
        f"T2,987654321,{mid},10,USD,2026-10-01T10:00:00Z",
        f"T3,{user_id},UNKNOWNMID,10,USD,2026-10-01T10:00:00Z",
        f"T4,{user_id},{mid},-1,USD,2026-10-01T10:00:00Z",
        f"T5,{user_id},{mid},1,QQQ,2026-10-01T10:00:00Z",
        f"T6,{user_id},{mid},1,USD,2026-10-01",
        f"T7,{user_id},{mid},1,USD,2999-01-01T00:00:00Z",
    )
    body = assert_problem(await upload(api, config_id, text), 400, "INVALID_IMPORT_FILE")
    assert body["errors"] == {
        "Row 1 (line 2)": ["TransactionId: Must be 1 to 64 letters, digits or _ . : -."],
        "Row 2 (line 3)": ["UserId: No user of the company has this Id."],
        "Row 3 (line 4)": ["Mid: No merchant of the company has this MID."],
        "Row 4 (line 5)": ["Amount: Must be a positive decimal amount, such as 12.50."],
        "Row 5 (line 6)": ["Currency: Not a supported currency code."],
        "Row 6 (line 7)": [
            "OccurredAt: Must be an ISO 8601 date-time with its offset, such as "
            "2026-01-31T12:00:00Z."
        ],
        "Row 7 (line 8)": ["OccurredAt: Must not be in the future."],
    }


async def test_a_transaction_imported_with_other_values_is_a_bad_row(
    api: httpx.AsyncClient,
) -> None:
    config_id, user_id, mid = await _setup(api)
    await upload(api, config_id, csv_file(f"T1,{user_id},{mid},10,USD,2026-10-01T10:00:00Z"))
    changed = csv_file(
        f"T2,{user_id},{mid},10,USD,2026-10-01T10:00:00Z",
        f"T1,{user_id},{mid},99,USD,2026-10-01T10:00:00Z",
    )
    body = assert_problem(await upload(api, config_id, changed), 400, "INVALID_IMPORT_FILE")
    assert "Row 2 (line 3), TransactionId" in body["detail"]
    assert await points(api, user_id) == 10


async def test_a_file_without_the_columns_is_refused(api: httpx.AsyncClient) -> None:
    config_id, _, _ = await _setup(api)
    response = await upload(api, config_id, "Id,Amount\n1,2\n")
    body = assert_problem(response, 400, "INVALID_IMPORT_FILE")
    assert "header line" in body["detail"]


async def test_an_empty_or_binary_file_is_refused(api: httpx.AsyncClient) -> None:
    config_id, _, _ = await _setup(api)
    assert_problem(await upload(api, config_id, ""), 400, "INVALID_IMPORT_FILE")
    binary = await api.post(
        f"/api/loyalty-programs/transaction-import/upload/{config_id}",
        files=[("File", ("x.csv", b"\xff\xfe\x00bad"))],
    )
    assert_problem(binary, 400, "INVALID_IMPORT_FILE")


async def test_the_configurations_delimiter_splits_the_cells(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api, Delimiter=";")
    text = "TransactionId;UserId;Mid;Amount;Currency;OccurredAt\n"
    text += f"T1;{user_id};{mid};5;USD;2026-10-01T10:00:00Z\n"
    assert (await upload(api, config_id, text)).status_code == 200
    assert await points(api, user_id) == 5


async def test_an_upload_without_the_file_is_a_400_problem(api: httpx.AsyncClient) -> None:
    config_id, _, _ = await _setup(api)
    response = await api.post(
        f"/api/loyalty-programs/transaction-import/upload/{config_id}",
        files=[("Other", ("x.csv", b"a"))],
    )
    assert_problem(response, 400, "VALIDATION_ERROR")


async def test_an_upload_to_an_unknown_configuration_is_a_404_problem(
    api: httpx.AsyncClient,
) -> None:
    response = await upload(api, 987654321, csv_file())
    assert_problem(response, 404, "LOYALTY_IMPORT_CONFIG_NOT_FOUND")


async def test_one_transaction_twice_in_a_file_with_other_values_is_a_bad_row(
    api: httpx.AsyncClient,
) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(
        f"T1,{user_id},{mid},10,USD,2026-10-01T10:00:00Z",
        f"T1,{user_id},{mid},11,USD,2026-10-01T10:00:00Z",
    )
    body = assert_problem(await upload(api, config_id, text), 400, "INVALID_IMPORT_FILE")
    assert body["errors"] == {"Row 2 (line 3)": ["TransactionId: Also on row 1 with other values."]}
    assert await points(api, user_id) == 0


async def test_a_file_of_more_than_10000_rows_is_refused(api: httpx.AsyncClient) -> None:
    config_id, user_id, mid = await _setup(api)
    text = csv_file(*(f"T{i},{user_id},{mid},1,USD,2026-10-01T10:00:00Z" for i in range(10_001)))
    body = assert_problem(await upload(api, config_id, text), 400, "INVALID_IMPORT_FILE")
    assert "more than 10000 rows" in body["detail"]
