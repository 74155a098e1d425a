"""Reads the JSON lines of `bench/topups.py` and `ceiling.sh` (files or stdin) and prints
{"scenario": "ratio", "hot_vs_ceiling": ..., "hot_vs_spread": ...} (null when a figure is
missing), plus whether each target of issue 5 is met."""

from __future__ import annotations

import fileinput
import json
import sys


def main() -> int:
    figures: dict[str, dict[str, object]] = {}
    with fileinput.input() as lines:
        for raw in lines:
            line = raw.strip()
            if line.startswith("{"):
                row = json.loads(line)
                figures[str(row.get("scenario"))] = row

    def ops(name: str) -> float | None:
        value = figures.get(name, {}).get("ops_per_s")
        return float(value) if isinstance(value, (int, float)) and value > 0 else None

    hot, spread, ceiling = ops("hot"), ops("spread"), ops("sql-ceiling")
    vs_ceiling = round(hot / ceiling, 3) if hot and ceiling else None
    vs_spread = round(hot / spread, 3) if hot and spread else None
    p99 = figures.get("hot", {}).get("p99_ms")
    print(
        json.dumps(
            {
                "scenario": "ratio",
                "hot_vs_ceiling": vs_ceiling,
                "hot_vs_spread": vs_spread,
                "targets_met": {
                    "hot_vs_ceiling>=1.5": vs_ceiling is not None and vs_ceiling >= 1.5,
                    "hot_vs_spread>=0.9": vs_spread is not None and vs_spread >= 0.9,
                    "hot_p99<100ms": isinstance(p99, (int, float)) and p99 < 100,
                },
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
