"""Loyalty: programmes, merchants and their MIDs, points, location insights and import
configurations under `/api/v2/loyalty`; the two legacy-compatible operations under
`/api/loyalty-programs`, whose errors are problem details."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, Response, status

from finplat.cards.transactions import service as card_transactions
from finplat.documents import multipart
from finplat.errors import ValidationFailed, error_responses, problem_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, UserIdPath
from finplat.loyalty import accrual, imports, insights, service
from finplat.loyalty.insights import Metric, Period
from finplat.loyalty.schemas import (
    AwardResponse,
    CardTransactionAssign,
    ConfigIdPath,
    ImportConfigCreate,
    ImportConfigList,
    ImportConfigResponse,
    ImportResultResponse,
    ImportUploadForm,
    LocationInsightsResponse,
    MerchantCreate,
    MerchantIdPath,
    MerchantList,
    MerchantResponse,
    MidCreate,
    MidIdPath,
    MidList,
    MidResponse,
    PointsBalance,
    ProgramCreate,
    ProgramIdPath,
    ProgramList,
    ProgramPoints,
    ProgramResponse,
    ProgramUpdate,
)

router = api_router(tags=["Loyalty"])
LOYALTY = "/api/v2/loyalty"
LEGACY = "/api/loyalty-programs"
FILE_FIELD = "File"

ProgramIdQuery = Annotated[
    int | None,
    Query(alias="programId", ge=1, le=MAX_ID, description="Only this programme's merchants."),
    PARAMETER_ID,
]


@router.post(
    f"{LOYALTY}/programs",
    response_model=ProgramResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a loyalty programme",
    description="A programme awards points per matched card purchase: `PER_CURRENCY_UNIT` "
    "(`PointsPerUnit` points per whole unit paid, rounded down; the default rule) or "
    "`PER_TRANSACTION` (`PointsPerTransaction` per purchase paid). Points follow what was "
    "paid (cleared less refunded). The rule's own rate defaults to 1; the other rule's rate "
    "is not the programme's and is left aside.",
    responses=error_responses(400),
)
async def loyalty_programs_create(
    body: ProgramCreate, session: DbSession, principal: CurrentPrincipal
) -> ProgramResponse:
    program = await service.create_program(
        session, company_id=principal.company_id, terms=body.terms()
    )
    return ProgramResponse.of(program)


@router.get(
    f"{LOYALTY}/programs",
    response_model=ProgramList,
    summary="List loyalty programmes",
    responses=error_responses(),
)
async def loyalty_programs_list(session: DbSession, principal: CurrentPrincipal) -> ProgramList:
    found = await service.list_programs(session, company_id=principal.company_id)
    return ProgramList(Items=[ProgramResponse.of(p) for p in found])


@router.get(
    f"{LOYALTY}/programs/{{programId}}",
    response_model=ProgramResponse,
    summary="Read a loyalty programme",
    responses=error_responses(400, 404),
)
async def loyalty_programs_read(
    programId: ProgramIdPath, session: DbSession, principal: CurrentPrincipal
) -> ProgramResponse:
    program = await service.find_program(
        session, company_id=principal.company_id, program_id=programId
    )
    return ProgramResponse.of(program)


@router.patch(
    f"{LOYALTY}/programs/{{programId}}",
    response_model=ProgramResponse,
    summary="Update a loyalty programme",
    description="Changes what is sent (null leaves a field as it is). `Status` `INACTIVE` "
    "stops new purchases from being assigned to it. A new rule or rate applies to purchases "
    "assigned from now on; awards already made keep the rule they were made under, so a "
    "refund takes back exactly what was given. A new `PointsRule` without its rate takes 1 "
    "(the stored rate when the rule stays); without `PointsRule`, only a rate the stored rule "
    "does not use is 409 `POINTS_RULE_CONFLICT`.",
    responses=error_responses(400, 404, 409),
)
async def loyalty_programs_update(
    programId: ProgramIdPath,
    body: ProgramUpdate,
    session: DbSession,
    principal: CurrentPrincipal,
) -> ProgramResponse:
    program = await service.update_program(
        session, company_id=principal.company_id, program_id=programId, terms=body.terms()
    )
    return ProgramResponse.of(program)


@router.post(
    f"{LOYALTY}/merchants",
    response_model=MerchantResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a merchant",
    description="A merchant (a location) of a programme, with its acquirer merchant ids "
    "(`Mids`, optional; add more at `.../ids`). A card purchase whose `Mid` is one of them "
    "earns points under the programme. A MID belongs to one merchant of the company: 409 "
    "`LOYALTY_MID_IN_USE`.",
    responses=error_responses(400, 404, 409),
)
async def loyalty_merchants_create(
    body: MerchantCreate, session: DbSession, principal: CurrentPrincipal
) -> MerchantResponse:
    merchant, mids = await service.create_merchant(
        session,
        company_id=principal.company_id,
        program_id=body.ProgramId,
        name=body.Name,
        city=body.City,
        country=body.Country,
        mids=body.Mids,
    )
    return MerchantResponse.of(merchant, mids)


@router.get(
    f"{LOYALTY}/merchants",
    response_model=MerchantList,
    summary="List merchants",
    description="The company's merchants with their MIDs; `programId` narrows the list.",
    responses=error_responses(400),
)
async def loyalty_merchants_list(
    session: DbSession, principal: CurrentPrincipal, programId: ProgramIdQuery = None
) -> MerchantList:
    found = await service.list_merchants(
        session, company_id=principal.company_id, program_id=programId
    )
    return MerchantList(Items=[MerchantResponse.of(m, mids) for m, mids in found])


@router.get(
    f"{LOYALTY}/merchants/{{merchantId}}",
    response_model=MerchantResponse,
    summary="Read a merchant",
    responses=error_responses(400, 404),
)
async def loyalty_merchants_read(
    merchantId: MerchantIdPath, session: DbSession, principal: CurrentPrincipal
) -> MerchantResponse:
    merchant = await service.find_merchant(
        session, company_id=principal.company_id, merchant_id=merchantId
    )
    mids = await service.mids_of(session, company_id=principal.company_id, merchant_id=merchantId)
    return MerchantResponse.of(merchant, mids)


@router.post(
    f"{LOYALTY}/merchants/{{merchantId}}/ids",
    response_model=MidResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Add a MID to a merchant",
    description="Purchases with this MID from now on match the merchant. A MID already "
    "belonging to a merchant of the company: 409 `LOYALTY_MID_IN_USE`.",
    responses=error_responses(400, 404, 409),
)
async def loyalty_mids_create(
    merchantId: MerchantIdPath,
    body: MidCreate,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MidResponse:
    mid = await service.add_mid(
        session, company_id=principal.company_id, merchant_id=merchantId, mid=body.Mid
    )
    return MidResponse.of(mid)


@router.get(
    f"{LOYALTY}/merchants/{{merchantId}}/ids",
    response_model=MidList,
    summary="List a merchant's MIDs",
    responses=error_responses(400, 404),
)
async def loyalty_mids_list(
    merchantId: MerchantIdPath, session: DbSession, principal: CurrentPrincipal
) -> MidList:
    mids = await service.mids_of(session, company_id=principal.company_id, merchant_id=merchantId)
    return MidList(Items=[MidResponse.of(m) for m in mids])


@router.delete(
    f"{LOYALTY}/merchants/{{merchantId}}/ids/{{midId}}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete a merchant's MID",
    description="204; the MID is gone (deleting it again is 404 `LOYALTY_MID_NOT_FOUND`). "
    "Purchases already matched keep their points; later purchases with this MID match "
    "nothing.",
    responses=error_responses(400, 404),
)
async def loyalty_mids_delete(
    merchantId: MerchantIdPath,
    midId: MidIdPath,
    session: DbSession,
    principal: CurrentPrincipal,
) -> Response:
    await service.delete_mid(
        session, company_id=principal.company_id, merchant_id=merchantId, mid_id=midId
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    f"{LOYALTY}/users/{{userId}}/points",
    response_model=PointsBalance,
    summary="Read a user's points",
    description="The points the user holds, in all and per programme: the sum of the points "
    "of the user's matched, assigned and imported transactions as they stand now (a refund "
    "has taken back what it refunded).",
    responses=error_responses(400, 404),
)
async def loyalty_points_read(
    userId: UserIdPath, session: DbSession, principal: CurrentPrincipal
) -> PointsBalance:
    per_program = await service.points_of(session, company_id=principal.company_id, user_id=userId)
    return PointsBalance(
        UserId=userId,
        Points=sum(p for _, p in per_program),
        Programs=[ProgramPoints(ProgramId=i, Points=p) for i, p in per_program],
    )


@router.get(
    f"{LOYALTY}/location-insights",
    response_model=LocationInsightsResponse,
    summary="Top locations",
    description="The company's merchants ranked by `metric` over the last `period` "
    "(`30d` default, `90d`, `1y`): `transactions` (default; matched and imported "
    "transactions with money paid), `users` (distinct users) or `points`; the top 10, ties "
    "by merchant id. Another `period` or `metric`: 400.",
    responses=error_responses(400),
)
async def loyalty_location_insights(
    session: DbSession,
    principal: CurrentPrincipal,
    period: Annotated[Period, Query(description="30d, 90d or 1y.")] = Period.DAYS_30,
    metric: Annotated[
        Metric, Query(description="transactions, users or points.")
    ] = Metric.TRANSACTIONS,
) -> LocationInsightsResponse:
    found = await insights.location_insights(
        session, company_id=principal.company_id, period=period, metric=metric
    )
    return LocationInsightsResponse.of(found)


@router.post(
    f"{LOYALTY}/import-configs",
    response_model=ImportConfigResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a transaction import configuration",
    description="Files uploaded under it (`POST /api/loyalty-programs/transaction-import/"
    "upload/{configId}`) earn points under `ProgramId`. A file is CSV, UTF-8, cells split by "
    "`Delimiter` (default `,`), its header line naming the `Columns`.",
    responses=error_responses(400, 404),
)
async def loyalty_import_configs_create(
    body: ImportConfigCreate, session: DbSession, principal: CurrentPrincipal
) -> ImportConfigResponse:
    config = await service.create_import_config(
        session,
        company_id=principal.company_id,
        program_id=body.ProgramId,
        name=body.Name,
        delimiter=body.Delimiter,
    )
    return ImportConfigResponse.of(config, imports.COLUMNS)


@router.get(
    f"{LOYALTY}/import-configs",
    response_model=ImportConfigList,
    summary="List transaction import configurations",
    responses=error_responses(),
)
async def loyalty_import_configs_list(
    session: DbSession, principal: CurrentPrincipal
) -> ImportConfigList:
    found = await service.list_import_configs(session, company_id=principal.company_id)
    return ImportConfigList(Items=[ImportConfigResponse.of(c, imports.COLUMNS) for c in found])


@router.get(
    f"{LOYALTY}/import-configs/{{configId}}",
    response_model=ImportConfigResponse,
    summary="Read a transaction import configuration",
    responses=error_responses(400, 404),
)
async def loyalty_import_configs_read(
    configId: ConfigIdPath, session: DbSession, principal: CurrentPrincipal
) -> ImportConfigResponse:
    config = await service.find_import_config(
        session, company_id=principal.company_id, config_id=configId
    )
    return ImportConfigResponse.of(config, imports.COLUMNS)


@router.post(
    f"{LEGACY}/auto-assign/card-transaction",
    response_model=AwardResponse,
    summary="Assign a card transaction to a loyalty programme (legacy)",
    description="Legacy-compatible; errors are problem details (`application/problem+json`). "
    "Assigns the card purchase `CardTransactionId` to `ProgramId`, or without it to the "
    "programme of the merchant whose MID the purchase carries (none: 409 "
    "`NO_MATCHING_MERCHANT`). It earns points on what it paid, now and at every later event. "
    "Assigning it again answers the same award; to another programme is 409 "
    "`ALREADY_ASSIGNED`; an inactive programme 409 `LOYALTY_PROGRAM_INACTIVE`.",
    responses=problem_responses(400, 404, 409),
)
async def loyalty_auto_assign_card_transaction(
    body: CardTransactionAssign, session: DbSession, principal: CurrentPrincipal
) -> AwardResponse:
    txn = await card_transactions.find(
        session, company_id=principal.company_id, txn_id=body.CardTransactionId
    )
    award = await accrual.assign(
        session, company_id=principal.company_id, txn=txn, program_id=body.ProgramId
    )
    return AwardResponse.of(award)


@router.post(
    f"{LEGACY}/transaction-import/upload/{{configId}}",
    response_model=ImportResultResponse,
    summary="Import past transactions from a CSV file (legacy)",
    description="Legacy-compatible; errors are problem details (`application/problem+json`). "
    "Multipart with one `File`: CSV under the configuration `configId` (its `Delimiter`, "
    "UTF-8), a header line naming `TransactionId`, `UserId`, `Mid`, `Amount`, `Currency`, "
    "`OccurredAt` (ISO 8601 with offset, not in the future), at most 10,000 rows. Every row "
    "is checked first: one bad row refuses the file (400 `INVALID_IMPORT_FILE`, `detail` "
    "naming the row and its line, `errors` listing each bad row), nothing imported. A row "
    "earns points under the configuration's programme at the merchant of its MID. A "
    "`TransactionId` already imported under the configuration with the same values is left "
    "as it is (importing a file again changes nothing); with other values it is a bad row.",
    responses=problem_responses(400, 404, 409, 413, 415),
    openapi_extra=multipart.request_body(
        ImportUploadForm,
        files={
            FILE_FIELD: {
                "type": "string",
                # Named so the fuzz hooks send real CSV: arbitrary bytes are a bad file.
                "format": "transactions-csv",
                "contentMediaType": "application/octet-stream",
                "description": "The CSV file: the header line, then one row per transaction.",
            }
        },
        required_files=[FILE_FIELD],
    ),
)
async def loyalty_transaction_import_upload(
    configId: ConfigIdPath,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
) -> ImportResultResponse:
    form = await multipart.read_form(request, file_fields={FILE_FIELD})
    multipart.parse_fields(ImportUploadForm, form, required_files=[FILE_FIELD])
    files = form.files[FILE_FIELD]
    if len(files) != 1:
        raise ValidationFailed(validation_errors={FILE_FIELD: ["Send one file."]})
    result = await imports.import_file(
        session, company_id=principal.company_id, config_id=configId, data=files[0].data
    )
    return ImportResultResponse.of(result)
