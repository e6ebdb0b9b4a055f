"""The job spark_standalone.sh submits to its Spark standalone cluster (client deploy mode).

Writes a 6-bucket log table and a 6-bucket primary-key table through the Riverlet catalog from
tasks of the executors, reads both back with a batch read and checks:

- the batch read plans one input partition per bucket (df.rdd.getNumPartitions() == 6), every
  partition holds rows and the partitions are disjoint;
- the rows read equal the rows the job wrote (computed here from the generator, never from a
  read): the log table every row once, the primary-key table each key's last upsert;
- the buckets' leaders (Table.bucketLeaders() in the driver's JVM, through py4j) are all three
  tablet servers, so the six partitions read from three servers;
- every partition was read in an executor JVM: the Python worker that received the partition's
  rows walks its parent processes up to the JVM that forked it, which must be a
  CoarseGrainedExecutorBackend (not the driver), whose /proc/PID/maps shows libriverlet_jni
  mapped from a riverlet_jni-* file in the executors' java.io.tmpdir (the executor extracted the
  native library from the shipped JAR and loaded it itself); at least two distinct executor JVMs
  took part, neither of them the driver.

Arguments: BOOTSTRAP TABLETS EXECUTOR_TMP (TABLETS: the FLUSS_TABLETS line, 0=host:port,1=...;
EXECUTOR_TMP: the executors' java.io.tmpdir). The last line
printed is "N passed, N failed"; the exit status is 1 if anything failed.
"""

import os
import sys
import time

from pyspark.sql import SparkSession

BOOTSTRAP, TABLETS, EXECUTOR_TMP = sys.argv[1], sys.argv[2], sys.argv[3]
BUCKETS = 6
ROWS = 600
LEADER_WAIT_S = 20
DB = f"engine_{int(time.time())}_{os.getpid()}"

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)


def jvm_ancestor():
    """(pid, cmdline) of the nearest java process above this Python worker, or (None, '')."""
    pid = os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        # comm may hold spaces; the fields after the closing parenthesis are fixed.
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        if argv and os.path.basename(argv[0].decode()) == "java":
            return ppid, [a.decode() for a in argv if a]
        pid = ppid
    return None, []


def describe_partition(index, rows):
    rows = [tuple(r) for r in rows]
    jpid, argv = jvm_ancestor()
    executor_id = None
    if "--executor-id" in argv:
        executor_id = argv[argv.index("--executor-id") + 1]
    backend = any(a.endswith("CoarseGrainedExecutorBackend") for a in argv)
    native = None
    if jpid is not None:
        with open(f"/proc/{jpid}/maps") as f:
            # address perms offset dev inode path[ (deleted)]: riverlet-java deletes its copy
            # once loaded, so the mapping's path carries the kernel's " (deleted)" suffix.
            paths = {line.split(maxsplit=5)[5].strip().removesuffix(" (deleted)")
                     for line in f if "libriverlet_jni" in line}
        native = sorted(paths)[0] if paths else None
    yield (index, rows, jpid, executor_id, backend, native)


def read_partitions(spark, table, expected_partitions):
    df = spark.table(table)
    n = df.rdd.getNumPartitions()
    check(f"{table}: one input partition per bucket", n == expected_partitions,
          f"{n} partitions, {expected_partitions} buckets")
    return df.rdd.mapPartitionsWithIndex(describe_partition).collect()


def check_executors(table, parts, driver_pid):
    pids = {p[2] for p in parts}
    check(f"{table}: every partition read in an executor JVM (CoarseGrainedExecutorBackend)",
          all(p[4] for p in parts) and None not in pids,
          [(p[0], p[2], p[3], p[4]) for p in parts])
    check(f"{table}: no partition read in the driver's JVM (pid {driver_pid})",
          driver_pid not in pids, sorted(pids, key=str))
    check(f"{table}: at least two distinct executor JVMs read partitions",
          len(pids - {None, driver_pid}) >= 2, sorted(pids, key=str))
    check(f"{table}: each executor JVM loaded libriverlet_jni, extracted from the shipped JAR "
          f"into its own java.io.tmpdir ({EXECUTOR_TMP})",
          all(p[5] and p[5].startswith(EXECUTOR_TMP + "/riverlet_jni-") for p in parts),
          [(p[0], p[2], p[5]) for p in parts])
    for p in parts:
        print(f"  partition {p[0]}: {len(p[1])} rows, executor {p[3]} (JVM pid {p[2]})")


def bucket_leaders(spark, table):
    """[(bucket, leader id or None, leader address or None)] as the cluster says now."""
    jvm = spark.sparkContext._jvm
    conn = jvm.io.riverlet.Riverlet.connect(BOOTSTRAP, jvm.java.util.HashMap())
    try:
        t = conn.table(table)
        leaders = [(bl.bucket(), bl.leaderId(), bl.leaderAddress()) for bl in t.bucketLeaders()]
        t.close()
    finally:
        conn.close()
    return leaders


def create_table(spark, table, ddl):
    """Runs the CREATE TABLE and waits until every bucket has a leader. Apache Fluss 0.9.1's
    coordinator now and then never assigns a new table's buckets (the create-table race of
    tests/README.md): then the table is dropped and created again, up to three attempts."""
    for attempt in range(1, 4):
        spark.sql(ddl)
        deadline = time.monotonic() + LEADER_WAIT_S
        while time.monotonic() < deadline:
            leaders = bucket_leaders(spark, table)
            if len(leaders) == BUCKETS and all(lid is not None for _, lid, _ in leaders):
                return
            time.sleep(0.5)
        print(f"{table} got no leader for every bucket within {LEADER_WAIT_S} s (attempt "
              f"{attempt}): dropping and creating it again", flush=True)
        spark.sql(f"DROP TABLE fluss_catalog.{table}")
    raise SystemExit(f"{table} got no leader in three attempts (see the coordinator log)")


def check_leaders(spark, table):
    """Every tablet server leads at least one bucket, at the address FLUSS_TABLETS gives."""
    leaders = bucket_leaders(spark, table)
    expected = dict(item.split("=", 1) for item in TABLETS.split(","))
    got = {str(lid): addr for _, lid, addr in leaders}
    check(f"{table}: the {BUCKETS} buckets are led by all {len(expected)} tablet servers",
          len(leaders) == BUCKETS and got == expected, f"leaders {leaders}, servers {expected}")


def main():
    spark = SparkSession.builder.appName("riverlet-engine-clusters").getOrCreate()
    sc = spark.sparkContext
    driver_pid = int(sc._jvm.java.lang.ProcessHandle.current().pid())
    print(f"driver JVM pid {driver_pid}, master {sc.master}, executors "
          f"{sc._jsc.sc().getExecutorMemoryStatus().size() - 1}", flush=True)
    spark.sql(f"CREATE DATABASE fluss_catalog.{DB}")

    # --- log table: 600 rows written by 4 tasks, bucketed by id ---
    log = f"fluss_catalog.{DB}.events"
    create_table(spark, f"{DB}.events",
                 f"CREATE TABLE {log} (id BIGINT, name STRING, amount INT) "
                 f"TBLPROPERTIES ('bucket.num' = '{BUCKETS}', 'bucket.key' = 'id')")
    spark.sql(f"INSERT INTO {log} SELECT id, concat('n', CAST(id AS STRING)), "
              f"CAST((id * 7) % 1000 AS INT) FROM range(0, {ROWS}, 1, 4)")
    expected = sorted((i, f"n{i}", (i * 7) % 1000) for i in range(ROWS))
    check_leaders(spark, f"{DB}.events")
    parts = read_partitions(spark, log, BUCKETS)
    got = sorted(r for p in parts for r in p[1])
    check(f"{log}: the rows read equal the {ROWS} rows written", got == expected,
          f"{len(got)} rows read; missing {sorted(set(expected) - set(got))[:5]}, "
          f"unexpected {sorted(set(got) - set(expected))[:5]}")
    ids = [set(r[0] for r in p[1]) for p in parts]
    check(f"{log}: every partition holds rows, no row in two partitions",
          all(ids) and sum(len(s) for s in ids) == len(set().union(*ids)),
          [len(s) for s in ids])
    check_executors(log, parts, driver_pid)

    # --- primary-key table: 300 keys upserted, then half of them again with new values ---
    pk = f"fluss_catalog.{DB}.accounts"
    keys = ROWS // 2
    create_table(spark, f"{DB}.accounts",
                 f"CREATE TABLE {pk} (id BIGINT, owner STRING, balance BIGINT) "
                 f"TBLPROPERTIES ('primary.key' = 'id', 'bucket.num' = '{BUCKETS}')")
    spark.sql(f"INSERT INTO {pk} SELECT id, concat('o', CAST(id AS STRING)), id * 10 "
              f"FROM range(0, {keys}, 1, 3)")
    spark.sql(f"INSERT INTO {pk} SELECT id, concat('p', CAST(id AS STRING)), id * 10 + 1 "
              f"FROM range(0, {keys}, 2, 3)")
    expected_pk = sorted((i, f"p{i}", i * 10 + 1) if i % 2 == 0 else (i, f"o{i}", i * 10)
                         for i in range(keys))
    check_leaders(spark, f"{DB}.accounts")
    parts = read_partitions(spark, pk, BUCKETS)
    got = sorted(r for p in parts for r in p[1])
    check(f"{pk}: the latest view equals each key's last upsert ({keys} keys)",
          got == expected_pk,
          f"{len(got)} rows read; missing {sorted(set(expected_pk) - set(got))[:5]}, "
          f"unexpected {sorted(set(got) - set(expected_pk))[:5]}")
    check_executors(pk, parts, driver_pid)

    spark.sql(f"DROP TABLE {log}")
    spark.sql(f"DROP TABLE {pk}")
    spark.sql(f"DROP DATABASE fluss_catalog.{DB}")
    spark.stop()
    passed = sum(results)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
