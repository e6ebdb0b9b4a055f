"""The Python clients' side of tests/keys-java/run.sh: Riverlet's Python package (or pyfluss)
upserts the keys it owns into the tables FlussKeysProbe.java created, then looks up every key
of every writer named, and prefix-looks up every prefix of the prefix-keyed tables.

    python keys.py <bootstrap> <database> riverlet <writers>   # Riverlet: write, then check
    python keys.py <bootstrap> <database> pyfluss <writers>    # pyfluss (report only)

The keys are FlussKeysProbe.java's (same formulas, same writer of key i: i % 3), so what is
expected comes from the formulas. Prints "ok ..." / "FAIL ..." lines; exits 1 when Riverlet
misses a row. pyfluss's misses are printed as "PEER BUG" lines and do not fail (its tail-byte
hashing bug, tests/README.md).
"""

from __future__ import annotations

import asyncio
import sys

PER_WRITER = 120
BUCKETS = (3, 4, 7)
SHAPES = ("int", "bigint", "string", "composite", "prefix")
WRITERS = ("java", "riverlet", "pyfluss")


def writer(i: int) -> str:
    return WRITERS[i % 3]


def key(shape: str, i: int) -> tuple:
    """Key i's primary-key values, in key order (FlussKeysProbe.key)."""
    sign = 1 if i % 2 == 0 else -1
    if shape == "int":
        return (sign * i * i * 37,)
    if shape == "bigint":
        return (sign * i * i * i * 1009,)
    if shape == "string":
        return (f"k{i}" + "\u00e9" * (i % 4) + ("\u9375" if i % 5 == 0 else ""),)
    if shape == "composite":
        return (i % 37 - 18, f"b{i}\u00df")
    return (prefix_a(i), f"p{i}")


def prefix_a(i: int) -> int:
    return (i // 4) * 100003 - 7


def columns(shape: str) -> list[str]:
    return ["k"] if shape in ("int", "bigint", "string") else ["a", "b"]


def tables():
    for shape in SHAPES:
        for n in BUCKETS:
            yield shape, f"{shape}_{n}"


failures = 0


def check(name: str, ok: bool, why: object = "") -> None:
    global failures
    if ok:
        print(f"ok {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


def report(name: str, ok: bool, why: object = "") -> None:
    print(f"ok {name}" if ok else f"PEER BUG {name}: {why}", flush=True)


def expect(found: dict, shape: str, writers: set[str], me: str, table: str) -> None:
    """`found`: key index -> the row's `v` (None when the lookup found nothing)."""
    for w in sorted(writers):
        idx = [i for i in range(3 * PER_WRITER) if writer(i) == w]
        missed = [key(shape, i) for i in idx if found[i] is None]
        name = f"{me} finds every row {w} wrote in {table}"
        why = f"{len(missed)} of {len(idx)} missed, e.g. {missed[:5]}"
        (report if me == "pyfluss" or w == "pyfluss" else check)(name, not missed, why)
    wrong = [(key(shape, i), v) for i, v in found.items()
             if v is not None and v != writer(i)]
    stray = [key(shape, i) for i, v in found.items()
             if v is not None and writer(i) not in writers]
    check(f"{me}'s lookups in {table} answer the right rows", not wrong and not stray,
          f"wrong v: {wrong[:5]}, rows nobody wrote: {stray[:5]}")


def expected_prefixes(writers: set[str]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for i in range(3 * PER_WRITER):
        if writer(i) in writers and writer(i) != "pyfluss":
            out.setdefault(prefix_a(i), set()).add(f"p{i}")
        else:
            out.setdefault(prefix_a(i), set())
    return out


def run_riverlet(bootstrap: str, db: str, writers: set[str]) -> None:
    import pyarrow as pa
    import riverlet

    conn = riverlet.connect(bootstrap)
    try:
        for shape, name in tables():
            t = conn.table(f"{db}.{name}")
            cols = columns(shape)
            mine = [i for i in range(3 * PER_WRITER) if writer(i) == "riverlet"]
            rows = [dict(zip(cols, key(shape, i)), v="riverlet") for i in mine]
            t.upsert(pa.Table.from_pylist(rows, schema=t.schema))
            found = {}
            for i in range(3 * PER_WRITER):
                row = t.lookup(key(shape, i))
                found[i] = None if row is None else row["v"]
            expect(found, shape, writers | {"riverlet"}, "riverlet", name)
            # The same keys through one batched lookup_many call.
            many = t.lookup_many([key(shape, i) for i in range(3 * PER_WRITER)])
            want = sum(1 for i in range(3 * PER_WRITER)
                       if writer(i) in writers | {"riverlet"} and writer(i) != "pyfluss")
            got = sum(1 for v in many.column("v").to_pylist() if v != "pyfluss")
            check(f"riverlet lookup_many in {name} finds {want} rows (all writers but pyfluss)",
                  got == want, got)
            if shape == "prefix":
                wrong = []
                for a, bs in expected_prefixes(writers | {"riverlet"}).items():
                    got_rows = t.prefix_lookup(a).to_pylist()
                    got_bs = {r["b"] for r in got_rows if r["v"] != "pyfluss"}
                    if got_bs != bs:
                        wrong.append(f"a={a}: {sorted(got_bs)}, expected {sorted(bs)}")
                check(f"riverlet prefix lookups in {name} find every row (all writers but pyfluss)",
                      not wrong, f"{len(wrong)} prefixes wrong, e.g. {wrong[:5]}")
    finally:
        conn.close()


async def run_pyfluss(bootstrap: str, db: str, writers: set[str]) -> None:
    import fluss

    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    for shape, name in tables():
        t = await conn.get_table(fluss.TablePath(db, name))
        cols = columns(shape)
        up = t.new_upsert().create_writer()
        for i in range(3 * PER_WRITER):
            if writer(i) == "pyfluss":
                up.upsert(dict(zip(cols, key(shape, i)), v="pyfluss"))
        await up.flush()
        # One pyfluss Lookuper answers one key at a time after waiting up to 100 ms for a
        # batch; a pool of them in flight keeps this phase short.
        pool = [t.new_lookup().create_lookuper() for _ in range(24)]
        found = {}

        async def drain(lk, idx):
            for i in idx:
                row = await lk.lookup(dict(zip(cols, key(shape, i))))
                found[i] = None if row is None else row["v"]

        every = range(3 * PER_WRITER)
        await asyncio.gather(*(drain(lk, every[j :: len(pool)]) for j, lk in enumerate(pool)))
        expect(found, shape, writers | {"pyfluss"}, "pyfluss", name)


def main() -> None:
    if len(sys.argv) != 5 or sys.argv[3] not in ("riverlet", "pyfluss"):
        sys.exit("usage: keys.py <bootstrap> <database> riverlet|pyfluss <writers>")
    bootstrap, db, client, writers = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4].split(","))
    if client == "riverlet":
        run_riverlet(bootstrap, db, writers)
    else:
        asyncio.run(run_pyfluss(bootstrap, db, writers))
    print("all checks passed" if failures == 0 else f"{failures} check(s) failed", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
