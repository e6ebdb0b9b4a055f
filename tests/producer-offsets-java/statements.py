#!/usr/bin/env python3
"""Splits annotated statement files for tests/flink-compare's StatementRunner.

    statements.py [--quick] OUT_SQL OUT_EXPECTED FILE...

A statement is a directive line (`-- exec batch|stream`, `-- query batch|stream N`) and the SQL
under it; the `-- => ` lines after it are its expected result lines (what the runner prints for
it, an error as `ERROR`), and a `-- [quick]` line before the directive puts it in the --quick
subset. Writes the statements (all, or with --quick only the marked ones) to OUT_SQL and their
expected lines, in order, to OUT_EXPECTED. Exits 2 on a file with no statement or a marked
subset that is empty.
"""

from __future__ import annotations

import sys

EXPECT = "-- => "
QUICK = "-- [quick]"


def statements(path: str) -> list[tuple[bool, list[str], list[str]]]:
    """(quick, directive + SQL lines, expected lines) of each statement of `path`."""
    out: list[tuple[bool, list[str], list[str]]] = []
    marked = False
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.startswith("-- exec") or line.startswith("-- query"):
            out.append((marked, [line], []))
            marked = False
        elif line == QUICK:
            marked = True
        elif line.startswith(EXPECT) and out:
            out[-1][2].append(line[len(EXPECT):])
        elif not line.startswith("--") and out:
            out[-1][1].append(line)
    return out


def main(argv: list[str]) -> int:
    quick = argv[:1] == ["--quick"]
    args = argv[1:] if quick else argv
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out_sql, out_expected, files = args[0], args[1], args[2:]
    chosen = []
    for f in files:
        found = statements(f)
        if not found:
            print(f"statements.py: no statement in {f}", file=sys.stderr)
            return 2
        chosen += [s for s in found if s[0] or not quick]
    if not chosen:
        print(f"statements.py: no statement marked {QUICK!r} in {files}", file=sys.stderr)
        return 2
    with open(out_sql, "w", encoding="utf-8") as sql, open(out_expected, "w", encoding="utf-8") as exp:
        for _, lines, expected in chosen:
            sql.write("\n".join(lines) + "\n")
            exp.writelines(e + "\n" for e in expected)
    print(f"statements.py: {len(chosen)} statements", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
