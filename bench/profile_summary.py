"""Where a py-spy profile's samples go: the functions with the largest inclusive and self
shares, from the collapsed stacks `--profile FILE.txt` records (py-spy's `raw` format, one
`frame;frame;... count` line per stack).

Usage: bench/profile_summary.py FILE.txt [--top N] [--match TEXT] [--exclude TEXT]

Frames are named `function (module)`, without line numbers, so that a function's samples add
up wherever in it they fell; a function counts once per stack however deep it recurses. With
`--match`, only the stacks through a frame containing TEXT count (e.g. `funding_endpoints`
for the top-up route), and shares are of those; `--exclude` leaves out the stacks through a
frame containing TEXT (e.g. `Thread._bootstrap`: threads other than the event loop's, which
`--native` records even while they wait).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

_LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<where>[^()]*?)(?::\d+)?\)$")


def frame_name(frame: str) -> str:
    """`Class.method (package/module.py)`: the frame without its line number."""
    found = _FRAME.match(frame)
    return f"{found['name']} ({found['where']})" if found else frame


def read(
    path: Path, match: str | None, exclude: list[str]
) -> tuple[Counter[str], Counter[str], int]:
    """(inclusive samples per function, self samples per function, all samples counted)."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        frames = found["stack"].split(";")[1:]  # the first names the process
        if match is not None and not any(match in f for f in frames):
            continue
        if any(text in f for text in exclude for f in frames):
            continue
        count = int(found["count"])
        total += count
        names = [frame_name(f) for f in frames]
        for name in set(names):
            inclusive[name] += count
        if names:
            own[names[-1]] += count
    return inclusive, own, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", help="only stacks through a frame containing this")
    parser.add_argument(
        "--exclude", action="append", default=[], help="no stacks through a frame containing this"
    )
    args = parser.parse_args()
    inclusive, own, total = read(args.profile, args.match, args.exclude)
    if not total:
        print("no samples", file=sys.stderr)
        return 1
    print(f"{total} samples")
    for title, counts in (("inclusive", inclusive), ("self", own)):
        print(f"\n{title}:")
        for name, count in counts.most_common(args.top):
            print(f"{100 * count / total:6.1f} %  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
