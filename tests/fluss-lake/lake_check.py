"""Riverlet's side of tests/fluss-cluster/run-fluss-tiered-lake.sh: writes the rows, waits for
Apache Fluss's own tiering service to commit them to the lake (Iceberg or Paimon), reads the
tables back with Riverlet (union read, `$lake`) and compares them with the rows written and
with what Fluss's Flink connector returned (StatementRunner's output).

  lake_check.py write BOOTSTRAP DB PHASE [FORMAT]   phase 1, 2 or 3 of the rows (below); with
        FORMAT paimon also the deletion-vector table pkdv
  lake_check.py wait FORMAT BOOTSTRAP DB TABLE WAREHOUSE TIERING_LOG TIMEOUT
        until the table's newest lake snapshot that is a Fluss tiering commit (an Iceberg
        snapshot whose summary, or a Paimon snapshot whose properties, name the
        `fluss-offsets` file) holds every record of the table's log (the file's bucket
        offsets add up to the records of the changelog (Table.changelog)), and Fluss answers
        that snapshot to the tiering job's GetLakeSnapshot (its "Last committed lake table
        snapshot" line); FORMAT is iceberg (a Hadoop catalog) or paimon (a filesystem catalog)
  lake_check.py check FORMAT BOOTSTRAP DB FLINK_OUT [READ_OUT...]
        Riverlet's reads (Python; and those of each READ_OUT: JavaRead.java's or SparkRead.java's
        output, `### java: NAME` / `### spark: NAME` blocks) against the rows written and
        against Fluss's Flink connector; exits 1 on any difference

  lake_check.py lake-used FORMAT BOOTSTRAP DB WAREHOUSE
        proof that Riverlet's union read of `logs` (and, with Paimon, of `pk` and `pkdv`)
        reads the lake files Fluss wrote (their rows are also still in the Fluss log, so equal
        rows alone cannot tell): with one of the table's data files moved away (all of them for
        pkdv, whose files a deletion-vector read may skip) the read must fail naming it (one of
        them); moved back, it reads all. A table for which Fluss reports no READABLE lake
        snapshot is the opposite proof: union reads take the readable snapshot, so with every
        data file moved away the read must still return all rows, from Fluss alone

  Both `check` and `lake-used` take what Fluss's own client reports of each table's latest and
  readable lake snapshots from the file named by $LAKE_SNAPSHOTS (FlussLakeSnapshots.java's
  output) when it is set.

The rows (ids and values are fixed, so the expected tables are computed here, from what was
written, never from a read):
  logs (log table, 3 buckets):  phase 1 appends ids 1..30 in three batches, phase 3 appends
                                ids 31..40 in two batches (after the tiering job is stopped,
                                so a read needs the lake and the log)
  pk (primary key id, 2 buckets): phase 1 upserts ids 1..20; phase 2 upserts ids 15..24 with
                                new values and deletes ids 1, 2 (tiered too: the lake then has
                                Iceberg delete files, or Paimon level-0 files holding -D rows
                                that a merge-on-read drops); phase 3 upserts ids 5, 25 and
                                deletes 3 (log only)
  pkdv (Paimon only):           pk's rows, in a table with `paimon.deletion-vectors.enabled`
                                and `table.datalake.auto-compaction` (the Paimon guide's
                                example): Fluss's tiering compacts, and union reads take the
                                READABLE snapshot and per-bucket offsets Fluss derives from
                                the compactions (DvTableReadableSnapshotRetriever); its `$lake`
                                is compared with Fluss's Flink connector's only (what a
                                deletion-vector read shows depends on what was compacted)

Fluss 0.9.1 registers no readable snapshot for `pkdv` here: its tiering commits each round's
APPEND and, with lookup compaction, a COMPACT snapshot in the same commit, and records the
COMPACT one as tiered; DvTableReadableSnapshotRetriever then finds the previous compacted
snapshot already recorded and registers no readable offsets. Fluss's client then answers
getReadableLakeSnapshot with LakeTableSnapshotNotExistException, and Fluss's Flink batch read
fails ("Batch mode can only be supported if one lake snapshot exists"). `check` reports that
error as a known Fluss limitation only when Fluss's client confirms the missing readable
snapshot; Riverlet's reads must still equal the rows written.

Fluss 0.9.1's own batch union read of an Iceberg primary-key table whose buckets have rows in
both the lake and the log fails: its Iceberg lake source has no sorted reader, so the
sort-merge of lake and log rows has no comparator (NullPointerException in
SortMergeReader$ConcatRecordIterator; Fluss's docs say Iceberg union reads of PK tables need
one). `check iceberg` reports exactly that error as a known Fluss limitation; any other answer
of Flink's `SELECT * FROM pk` must equal the rows written. Paimon's lake source has a sorted
reader, so with `check paimon` Fluss's union read of `pk` must equal the rows written.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import re
import sys
import time

import pyarrow as pa

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int32()),
                    ("price", pa.float64()), ("day", pa.date32())])
PROPS = {"table.datalake.enabled": "true", "table.datalake.freshness": "3s"}
# The Paimon guide's deletion-vector table, compacted by the tiering service (`paimon.*` keys
# are custom properties for Fluss).
DV_PROPS = {**PROPS, "table.datalake.auto-compaction": "true"}
DV_CUSTOM = {"paimon.deletion-vectors.enabled": "true"}
DAY0 = dt.date(2026, 1, 1)


def row(i: int, gen: int) -> dict:
    """The row of id `i` as written by generation `gen` (phase 1 is 0; later upserts change it)."""
    return {"id": i, "name": f"n{i}-g{gen}", "amount": i * 10 + gen,
            "price": i + gen / 4, "day": DAY0 + dt.timedelta(days=i + gen)}


def batch(rows: list) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


# What each phase writes: (appends to logs as batches, upserts to pk, deletes from pk).
PHASES = {
    1: ([[row(i, 0) for i in range(b, b + 10)] for b in (1, 11, 21)],
        [row(i, 0) for i in range(1, 21)], []),
    2: ([], [row(i, 1) for i in range(15, 25)], [1, 2]),
    3: ([[row(i, 0) for i in range(31, 36)], [row(i, 0) for i in range(36, 41)]],
        [row(5, 2), row(25, 2)], [3]),
}


def expected_logs(upto: int) -> list:
    return [r for p in sorted(PHASES) if p <= upto for b in PHASES[p][0] for r in b]


def expected_pk(upto: int) -> list:
    state: dict = {}
    for p in sorted(PHASES):
        if p > upto:
            break
        for r in PHASES[p][1]:
            state[r["id"]] = r
        for k in PHASES[p][2]:
            state.pop(k, None)
    return list(state.values())


def connect(bootstrap: str) -> riverlet.Connection:
    return riverlet.connect(bootstrap)


def await_leaders(table, deadline: float) -> None:
    """Fluss 0.9.1's create-table race (tests/README.md): a new table may never get leaders."""
    while True:
        try:
            table.read(limit=1)
            return
        except riverlet.RiverletError as e:  # LEADER_NOT_AVAILABLE and the like, for a while
            if time.time() > deadline:
                raise SystemExit(f"table {table.name} got no bucket leaders: {e}")
            time.sleep(0.5)


def pk_tables(fmt: str) -> dict:
    """The primary-key tables of the lake `fmt`, with their properties and custom properties
    (module docs)."""
    return {"pk": (PROPS, {}), **({"pkdv": (DV_PROPS, DV_CUSTOM)} if fmt == "paimon" else {})}


def write(bootstrap: str, db: str, phase: int, fmt: str) -> None:
    conn = connect(bootstrap)
    pks = pk_tables(fmt)
    if phase == 1:
        conn.create_database(db, if_not_exists=True)
        conn.create_table(f"{db}.logs", SCHEMA, buckets=3, properties=PROPS)
        for name, (props, custom) in pks.items():
            conn.create_table(f"{db}.{name}", SCHEMA, primary_key="id", buckets=2,
                              properties=props, custom_properties=custom)
        for name in ("logs", *pks):
            await_leaders(conn.table(f"{db}.{name}"), time.time() + 60)
    appends, upserts, deletes = PHASES[phase]
    logs = conn.table(f"{db}.logs")
    for b in appends:
        logs.append(batch(b))
    for name in pks:
        pk = conn.table(f"{db}.{name}")
        if upserts:
            pk.upsert(batch(upserts))
        if deletes:
            pk.delete(deletes)
    conn.close()
    print(f"lake_check: phase {phase} written: {sum(len(b) for b in appends)} appends, "
          f"{len(upserts)} upserts, {len(deletes)} deletes")


FORMATS = ("iceberg", "paimon")


def iceberg_tiered_snapshot(warehouse: str, db: str, table: str):
    """(snapshot id, fluss-offsets path) of the current snapshot of the Iceberg table in the
    Hadoop catalog when Fluss's tiering committed it, else None."""
    meta = os.path.join(warehouse, db, table, "metadata")
    try:
        version = open(os.path.join(meta, "version-hint.text")).read().strip()
        m = json.load(open(os.path.join(meta, f"v{version}.metadata.json")))
    except (OSError, ValueError):
        return None
    cur = m.get("current-snapshot-id")
    snap = next((s for s in m.get("snapshots", []) if s["snapshot-id"] == cur), None)
    if snap and "fluss-offsets" in snap["summary"]:
        return snap["snapshot-id"], snap["summary"]["fluss-offsets"]
    return None


def paimon_tiered_snapshot(warehouse: str, db: str, table: str):
    """(snapshot id, fluss-offsets path) of the newest snapshot of the Paimon table in the
    filesystem catalog (`<warehouse>/<db>.db/<table>/snapshot/snapshot-<id>`, JSON) that Fluss's
    tiering committed (commit user `__fluss_lake_tiering`, property `fluss-offsets`), else None.
    The snapshot files are listed rather than read through the `LATEST` hint, which Paimon
    writes after the snapshot and may lag behind it."""
    snap_dir = os.path.join(warehouse, f"{db}.db", table, "snapshot")
    try:
        ids = sorted((int(n[len("snapshot-"):]) for n in os.listdir(snap_dir)
                      if re.fullmatch(r"snapshot-\d+", n)), reverse=True)
    except OSError:
        return None
    for sid in ids:
        try:
            snap = json.load(open(os.path.join(snap_dir, f"snapshot-{sid}")))
        except (OSError, ValueError):  # being written, or expired since the listing
            continue
        props = snap.get("properties") or {}
        if snap.get("commitUser") == "__fluss_lake_tiering" and "fluss-offsets" in props:
            return snap["id"], props["fluss-offsets"]
    return None


def wait(fmt: str, bootstrap: str, db: str, table: str, warehouse: str, tiering_log: str,
         timeout: float) -> None:
    tiered_snapshot = iceberg_tiered_snapshot if fmt == "iceberg" else paimon_tiered_snapshot
    conn = connect(bootstrap)
    records = conn.table(f"{db}.{table}").changelog().num_rows
    conn.close()
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        snap = tiered_snapshot(warehouse, db, table)
        if snap:
            snapshot_id, offsets_file = snap
            offsets = json.load(open(offsets_file))
            tiered = sum(o for o in offsets.get("bucket_offsets", []) if o > 0)
            last = (snapshot_id, tiered)
            pattern = re.compile(r"Last committed lake table snapshot info is:LakeSnapshot\{"
                                 rf"snapshotId={snapshot_id},")
            if tiered == records and any(pattern.search(l) for l in open(tiering_log)):
                print(f"lake_check: {db}.{table}: {fmt} snapshot {snapshot_id} holds "
                      f"all {records} log records, and Fluss reports it")
                return
        time.sleep(1)
    raise SystemExit(f"lake_check: {db}.{table}: no lake snapshot with all {records} log records "
                     f"reported by Fluss within {timeout:.0f} s (last seen: {last})")


# --- comparison -----------------------------------------------------------------------------

def flink_value(v) -> str:
    """A value as Flink's Row.toString prints it."""
    if v is None:
        return "null"
    if isinstance(v, dt.datetime):  # java.time.Instant.toString: no fraction when it is zero
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        spec = "seconds" if v.microsecond == 0 else \
            "milliseconds" if v.microsecond % 1000 == 0 else "microseconds"
        return v.isoformat(timespec=spec) + "Z"
    return str(v)


def flink_rows(rows: list, cols: list) -> list:
    return sorted("+I[" + ", ".join(flink_value(r[c]) for c in cols) + "]" for r in rows)


# What StatementRunner prints for Fluss 0.9.1's failing Iceberg PK union read (module docs).
KNOWN_PK_UNION_ERROR = ('ERROR NullPointerException: Cannot invoke "java.util.Comparator.compare'
                        '(Object, Object)" because "comparator" is null')


# What StatementRunner prints for Fluss 0.9.1's batch read of a table without a readable lake
# snapshot (module docs: the deletion-vector table).
KNOWN_NO_READABLE_ERROR = ("ERROR UnsupportedOperationException: Currently, Batch mode can only "
                           "be supported if one lake snapshot exists for the table.")


def fluss_snapshots() -> dict:
    """{(table, "latest" | "readable"): snapshot id or None} as Fluss's own client reported
    them (FlussLakeSnapshots.java's output in $LAKE_SNAPSHOTS; empty when unset)."""
    path = os.environ.get("LAKE_SNAPSHOTS")
    out: dict = {}
    if not path:
        return out
    for line in open(path, encoding="utf-8"):
        parts = line.split(" ", 3)
        if len(parts) >= 3:
            out[(parts[0], parts[1])] = None if parts[2] == "NONE" else int(parts[2])
    return out


def flink_blocks(path: str) -> dict:
    out, head = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("### "):
            head = line.split(": ", 1)[1]
            out[head] = []
        elif head is not None:
            out[head].append(line)
    return out


def check(fmt: str, bootstrap: str, db: str, flink_out: str, read_outs: list) -> None:
    conn = connect(bootstrap)
    flink = flink_blocks(flink_out)
    # The other bindings' reads, by the name their blocks start with ("java", "spark").
    others = {}
    for path in read_outs:
        first = next((l for l in open(path, encoding="utf-8") if l.startswith("### ")), None)
        if first is None:
            raise SystemExit(f"lake_check: no '### ' block in {path}")
        others[first[4:].split(":", 1)[0].capitalize()] = flink_blocks(path)
    user = [f.name for f in SCHEMA]
    snapshots = fluss_snapshots()
    failures = 0

    def compare(what: str, got: list, want: list) -> None:
        nonlocal failures
        if got == want:
            print(f"lake_check: {what}: equal ({len(got)} rows)")
            return
        failures += 1
        print(f"lake_check: MISMATCH {what}: {len(got)} rows vs {len(want)}")
        for r in sorted(set(got) - set(want))[:10]:
            print(f"    only in the first:  {r}")
        for r in sorted(set(want) - set(got))[:10]:
            print(f"    only in the second: {r}")
        if len(set(got)) != len(got):
            print("    the first has duplicates")

    def flink_of(sql: str) -> list:
        """Flink's rows of `sql` as rows of a table: a batch read of a Paimon primary-key table
        (`pk$lake`) gives each updated key's merged row with the kind +U it was written with,
        which Riverlet's Arrow rows do not carry, so +U counts as +I. A retraction (-U, -D)
        in a batch result would be a row that is not in the table: it is kept, so the
        comparison fails on it."""
        rows = flink.get(sql)
        if rows is None:
            raise SystemExit(f"lake_check: no '{sql}' in {flink_out}")
        return sorted("+I[" + r[3:] if r.startswith("+U[") else r for r in rows)

    pks = list(pk_tables(fmt))
    for name, want in (("logs", expected_logs(3)), *((n, expected_pk(3)) for n in pks)):
        got = conn.table(f"{db}.{name}").read().to_pylist()
        written = flink_rows(want, user)
        compare(f"Riverlet read of {name} == rows written", flink_rows(got, user), written)
        for binding, rows in others.items():
            compare(f"Riverlet {binding} read of {name} == rows written", rows.get(name, []),
                    written)
        theirs = flink_of(f"SELECT * FROM {name}")
        if fmt == "iceberg" and name == "pk" and theirs == [KNOWN_PK_UNION_ERROR]:
            print(f"lake_check: KNOWN FLUSS 0.9.1 LIMITATION: Fluss Flink SELECT * FROM pk: "
                  f"{theirs[0]}")
            continue
        if (theirs == [KNOWN_NO_READABLE_ERROR] and (name, "readable") in snapshots
                and snapshots[(name, "readable")] is None):
            print(f"lake_check: KNOWN FLUSS 0.9.1 LIMITATION: Fluss's client reports no "
                  f"readable lake snapshot of {name} (latest tiered: "
                  f"{snapshots.get((name, 'latest'))}), and Fluss Flink SELECT * FROM {name}: "
                  f"{theirs[0]}")
            continue
        compare(f"Fluss Flink SELECT * FROM {name} == rows written", theirs, written)
    for name, want in (("logs", expected_logs(1)), *((n, expected_pk(2)) for n in pks)):
        t = conn.table(f"{db}.{name}$lake")
        cols = t.schema.names
        got = t.read().to_pylist()
        if name != "pkdv":
            compare(f"Riverlet {name}$lake user columns == rows tiered",
                    flink_rows(got, user), flink_rows(want, user))
        theirs = flink_of(f"SELECT * FROM `{name}$lake`")
        compare(f"Riverlet {name}$lake == Fluss Flink {name}$lake (all columns)",
                flink_rows(got, cols), theirs)
        for binding, rows in others.items():
            compare(f"Riverlet {binding} {name}$lake == Fluss Flink {name}$lake (all columns)",
                    rows.get(f"{name}$lake", []), theirs)
    conn.close()
    if failures:
        raise SystemExit(f"lake_check: {failures} mismatch(es)")
    print("lake_check: all reads equal")


def lake_used(fmt: str, bootstrap: str, db: str, warehouse: str) -> None:
    # Primary-key tables have a union read only with Paimon: with Iceberg Riverlet reads their
    # latest view from Fluss (as Fluss's own Iceberg union read cannot merge them, module docs).
    snapshots = fluss_snapshots()
    tables = {"logs": len(expected_logs(3))}
    if fmt == "paimon":
        tables.update((name, len(expected_pk(3))) for name in pk_tables(fmt))
    conn = connect(bootstrap)
    for table, want in tables.items():
        # Iceberg (Hadoop catalog): <db>/<table>/data/**/*.parquet; Paimon (filesystem
        # catalog): <db>.db/<table>/bucket-<n>/data-*.parquet (logs has no bucket key: all in
        # bucket-0), beside the changelog-*.parquet files of a PK table (Fluss sets
        # changelog-producer=input), which only streaming reads of the changelog use.
        pattern = (os.path.join(warehouse, db, table, "data", "**", "*.parquet")
                   if fmt == "iceberg"
                   else os.path.join(warehouse, f"{db}.db", table, "bucket-*", "data-*.parquet"))
        files = sorted(glob.glob(pattern, recursive=True))
        if not files:
            raise SystemExit(f"lake_check: no data files of {db}.{table} under {warehouse}")
        if (table, "readable") in snapshots and snapshots[(table, "readable")] is None:
            # No readable snapshot: the union read must not touch the lake at all.
            for f in files:
                os.rename(f, f + ".moved")
            try:
                n = conn.table(f"{db}.{table}").read().num_rows
            finally:
                for f in files:
                    os.rename(f + ".moved", f)
            if n != want:
                raise SystemExit(f"lake_check: FAILED: {n} rows of {table} (of {want}) without "
                                 f"its lake files, though Fluss reports no readable snapshot")
            print(f"lake_check: Fluss reports no readable snapshot of {table}: without its "
                  f"{len(files)} lake files the union read still has all {n} rows")
            continue
        # A deletion-vector read skips level-0 files and files whose rows are all deleted, so
        # for pkdv every data file goes; the error names the first the read opened.
        away = files if table == "pkdv" else files[:1]
        names = [os.path.basename(f) for f in away]
        for f in away:
            os.rename(f, f + ".moved")
        try:
            rows = conn.table(f"{db}.{table}").read()
            raise SystemExit(f"lake_check: FAILED: the union read of {db}.{table} gave "
                             f"{rows.num_rows} rows without its lake files {names}: it did "
                             f"not read the lake")
        except riverlet.RiverletError as e:
            named = [n for n in names if n in str(e)]
            if not named:
                raise SystemExit(f"lake_check: FAILED: the read of {db}.{table} without "
                                 f"{names} failed without naming one: {e}")
            print(f"lake_check: without {len(away)} lake file(s) the union read of {table} "
                  f"fails naming {named[0]}")
        finally:
            for f in away:
                os.rename(f + ".moved", f)
        n = conn.table(f"{db}.{table}").read().num_rows
        if n != want:
            raise SystemExit(f"lake_check: FAILED: {n} rows of {table} once the file is back")
        print(f"lake_check: with it back the union read of {table} has all {n} rows again")
    conn.close()


def main(argv: list) -> None:
    if len(argv) in (4, 5) and argv[0] == "write":
        write(argv[1], argv[2], int(argv[3]), argv[4] if len(argv) == 5 else "iceberg")
    elif len(argv) == 8 and argv[0] == "wait" and argv[1] in FORMATS:
        wait(argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], float(argv[7]))
    elif len(argv) == 5 and argv[0] == "lake-used" and argv[1] in FORMATS:
        lake_used(argv[1], argv[2], argv[3], argv[4])
    elif len(argv) >= 5 and argv[0] == "check" and argv[1] in FORMATS:
        check(argv[1], argv[2], argv[3], argv[4], argv[5:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
