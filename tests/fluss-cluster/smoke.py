#!/usr/bin/env python3
"""Smoke check of a running Fluss cluster with the pyfluss client.

Creates a database and a log table, appends rows, scans them back, and drops
both. Every step has a deadline. Needs `pip install pyfluss` (1.0.x).

Usage: smoke.py [--sasl] [WORKDIR]   (reads WORKDIR/bootstrap.env)
Prints '1 passed, 0 failed' or '0 passed, 1 failed' as its last line.
"""
import asyncio
import os
import sys
import time

STEP_TIMEOUT = 30.0


def read_env(workdir):
    env = {}
    with open(os.path.join(workdir, "bootstrap.env")) as f:
        for line in f:
            line = line.strip()
            if line and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    return env


async def step(what, awaitable):
    t = time.monotonic()
    result = await asyncio.wait_for(awaitable, STEP_TIMEOUT)
    print(f"  ok  {what} ({time.monotonic() - t:.2f}s)", flush=True)
    return result


async def smoke(env, sasl):
    import fluss
    import pyarrow as pa

    cfg = fluss.Config()
    if sasl:
        cfg.bootstrap_servers = env["FLUSS_SASL_BOOTSTRAP"]
        cfg.security_protocol = "sasl"
        cfg.security_sasl_mechanism = "PLAIN"
        cfg.security_sasl_username = env.get("FLUSS_SASL_USERNAME", "admin")
        cfg.security_sasl_password = env.get("FLUSS_SASL_PASSWORD", "admin-secret")
    else:
        cfg.bootstrap_servers = env["FLUSS_BOOTSTRAP"]
    cfg.connect_timeout_ms = 5000
    print(f"connecting to {cfg.bootstrap_servers} ({'SASL/PLAIN' if sasl else 'plaintext'})")

    conn = await step("connect", fluss.FlussConnection.create(cfg))
    try:
        admin = conn.get_admin()
        nodes = await step("get_server_nodes", admin.get_server_nodes())
        print("      servers:", [(n.server_type, n.id, f"{n.host}:{n.port}") for n in nodes])
        db = f"riverlet_smoke_{os.getpid()}"
        await step(f"create_database {db}", admin.create_database(db, ignore_if_exists=False))
        path = fluss.TablePath(db, "events")
        schema = fluss.Schema(pa.schema([("id", pa.int32()), ("name", pa.string())]))
        await step("create_table", admin.create_table(path, fluss.TableDescriptor(schema, bucket_count=1)))
        table = await step("get_table", conn.get_table(path))

        writer = table.new_append().create_writer()
        rows = [(i, f"row-{i}") for i in range(10)]
        for r in rows:
            writer.append(list(r))
        await step(f"append {len(rows)} rows + flush", writer.flush())

        scanner = await step("create_log_scanner", table.new_scan().create_log_scanner())
        scanner.subscribe(0, fluss.EARLIEST_OFFSET)
        got = []
        deadline = time.monotonic() + STEP_TIMEOUT
        while len(got) < len(rows) and time.monotonic() < deadline:
            recs = await asyncio.wait_for(scanner.poll(1000), STEP_TIMEOUT)
            got.extend((r.row["id"], r.row["name"]) for r in recs)
        print(f"  ok  scanned {len(got)} rows")
        assert sorted(got) == rows, f"scan mismatch: {got}"

        await step("drop_table", admin.drop_table(path, ignore_if_not_exists=False))
        await step("drop_database", admin.drop_database(db, ignore_if_not_exists=False, cascade=True))
    finally:
        await asyncio.wait_for(conn.close(), STEP_TIMEOUT)


def main():
    args = sys.argv[1:]
    sasl = "--sasl" in args
    rest = [a for a in args if a != "--sasl"]
    workdir = rest[0] if rest else os.environ.get("FLUSS_CLUSTER_DIR", "/tmp/riverlet-fluss-cluster")
    env = read_env(workdir)
    ok = False
    try:
        asyncio.run(smoke(env, sasl))
        ok = True
    except Exception as e:  # report and fail
        print(f"  FAIL {type(e).__name__}: {e}", flush=True)
    print("1 passed, 0 failed" if ok else "0 passed, 1 failed", flush=True)
    sys.stdout.flush()
    # pyfluss's runtime has been seen to abort at interpreter exit; skip it.
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
