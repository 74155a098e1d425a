"""Print one value of a JSON answer, for the shell variables of docs/walkthrough.md.

    python3 examples/field.py PayeeId < var/payee.json
    python3 examples/field.py AccountId Provider=bankprov < var/accounts.json

The value is the first FIELD found (depth first) in an object that also holds every NAME=VALUE
given. Only the standard library: any Python 3 runs it, the project's virtualenv or not.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def find(document: Any, field: str, where: dict[str, str]) -> Any:
    if isinstance(document, dict):
        if field in document and all(str(document.get(k)) == v for k, v in where.items()):
            return document[field]
        children = list(document.values())
    elif isinstance(document, list):
        children = document
    else:
        return None
    for child in children:
        found = find(child, field, where)
        if found is not None:
            return found
    return None


def main(arguments: list[str]) -> int:
    if not arguments or not all("=" in condition for condition in arguments[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    field, *conditions = arguments
    where = dict(condition.split("=", 1) for condition in conditions)
    value = find(json.load(sys.stdin), field, where)
    if value is None:
        print(f"no {field} in the answer", file=sys.stderr)
        return 1
    print(value)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
