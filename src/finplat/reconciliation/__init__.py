"""Reconciliation: settle what the providers have decided, compare balances, report the rest.

`finplat reconcile` runs it once; the background job runs it every
`FINPLAT_RECONCILE_INTERVAL_SECONDS`.
"""
