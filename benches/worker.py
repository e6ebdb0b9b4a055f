"""One measurement in a fresh process: `python benches/worker.py < spec.json` (or the JSON as argv[1]).

benches/run.py starts this once per run so that every contender gets a clean process (no warm
allocator, no leftover memory) and so that the peak RSS the parent reads with os.wait4 belongs
to exactly one measurement. The last stdout line is a JSON object with the figures.

spec keys: op, contender ("pyfluss" | "riverlet"), bootstrap, table, buckets, data (Arrow IPC
file of the bench data, 8192-row batches), plus op-specific keys (append: `existing` appends to
a table the caller created instead of creating it, `keep` keeps the table afterwards; both for
benches/scale.py). Timings exclude imports, connecting and table lookup: only the measured
operation is inside the clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pyarrow as pa

RPC_TIMEOUT = float(os.environ.get("BENCH_RPC_TIMEOUT", "300"))


def load_data(path: str, rows: int | None = None) -> pa.Table:
    """The bench data, memory-mapped (zero-copy); the first `rows` rows when given."""
    with pa.memory_map(path, "r") as src:
        table = pa.ipc.open_file(src).read_all()
    if rows is not None and rows < table.num_rows:
        table = table.slice(0, rows)
    return table


def batches_of(table: pa.Table, size: int = 8192) -> list[pa.RecordBatch]:
    """`table` cut into record batches of `size` rows (zero-copy slices)."""
    out = []
    for b in table.to_batches():
        for off in range(0, b.num_rows, size):
            out.append(b.slice(off, min(size, b.num_rows - off)))
    return out


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


# ------------------------------------------------------------------------------------------
# pyfluss (the official Apache Fluss Python client, async API)
# ------------------------------------------------------------------------------------------


async def aw(x, timeout: float = RPC_TIMEOUT):
    return await asyncio.wait_for(x, timeout)


async def pyfluss_connect(bootstrap: str, ready_timeout: float = 60.0):
    import fluss

    config = fluss.Config({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + ready_timeout
    last = None
    while time.monotonic() < deadline:
        conn = None
        try:
            conn = await aw(fluss.FlussConnection.create(config), 20)
            nodes = await aw(conn.get_admin().get_server_nodes(), 20)
            if any(n.server_type == "TabletServer" for n in nodes):
                return conn
            last = RuntimeError(f"no tablet server among {nodes}")
        except Exception as e:  # retried until the deadline
            last = e
        if conn is not None:
            await aw(conn.close(), 10)
        await asyncio.sleep(0.3)
    raise RuntimeError(f"pyfluss could not connect to {bootstrap}: {last}")


def pyfluss_path(name: str):
    import fluss

    db, table = name.split(".", 1)
    return fluss.TablePath(db, table)


async def pyfluss_wait_ready(admin, path, buckets: int):
    import fluss

    deadline = time.monotonic() + 60
    while True:
        try:
            await aw(admin.list_offsets(path, list(range(buckets)), fluss.OffsetSpec.earliest()))
            return
        except fluss.FlussError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def pyfluss_create(conn, name: str, schema: pa.Schema, buckets: int, pk=None):
    import fluss

    admin = conn.get_admin()
    db = name.split(".", 1)[0]
    await aw(admin.create_database(db, ignore_if_exists=True))
    path = pyfluss_path(name)
    fschema = fluss.Schema(schema, primary_keys=pk) if pk else fluss.Schema(schema)
    await aw(admin.create_table(path, fluss.TableDescriptor(fschema, bucket_count=buckets), False))
    await pyfluss_wait_ready(admin, path, buckets)
    return path


async def pyfluss_write_batches(table, batches) -> None:
    writer = table.new_append().create_writer()
    for b in batches:
        writer.write_arrow_batch(b)
    await aw(writer.flush())


async def pyfluss_scanner(table, buckets: int):
    import fluss

    scanner = await aw(table.new_scan().create_record_batch_log_scanner())
    scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(buckets)})
    return scanner


async def pyfluss_main(spec: dict) -> dict:
    import fluss

    op = spec["op"]
    conn = await pyfluss_connect(spec["bootstrap"])
    out: dict = {}
    try:
        if op == "create_load":
            # The one-time load of the shared data set (and its commit-time span).
            data = load_data(spec["data"], spec.get("rows"))
            path = await pyfluss_create(conn, spec["table"], data.schema, spec["buckets"])
            table = await aw(conn.get_table(path))
            # Written in `slices` equal row ranges, each flushed (acknowledged) before the next
            # starts and stamped with the wall-clock ms just before it starts (after the clock
            # moved past the previous ack). The server's commit timestamps of slice k then lie in
            # [slice_ts[k], slice_ts[k+1]): a window between two stamps holds exactly those slices.
            slices = spec.get("slices", 100)
            n = data.num_rows
            bounds = [n * k // slices for k in range(slices + 1)]
            writer = table.new_append().create_writer()
            slice_ts = []
            t0 = time.perf_counter()
            last_ack_ms = -1
            for k in range(slices):
                while int(time.time() * 1000) <= last_ack_ms:
                    time.sleep(0.0002)
                slice_ts.append(int(time.time() * 1000))
                for b in batches_of(data.slice(bounds[k], bounds[k + 1] - bounds[k])):
                    writer.write_arrow_batch(b)
                await aw(writer.flush())
                last_ack_ms = int(time.time() * 1000)
            while int(time.time() * 1000) <= last_ack_ms:
                time.sleep(0.0002)
            slice_ts.append(int(time.time() * 1000))
            out["seconds"] = time.perf_counter() - t0
            out["slice_ts"] = slice_ts
            out["slice_rows"] = [bounds[k + 1] - bounds[k] for k in range(slices)]
            out["rows"] = n
            out["table_id"] = table.get_table_info().table_id
        elif op == "create_load_pk":
            data = load_data(spec["data"], spec["rows"])
            path = await pyfluss_create(
                conn, spec["table"], data.schema, spec["buckets"], pk=[data.schema.names[0]]
            )
            table = await aw(conn.get_table(path))
            writer = table.new_upsert().create_writer()
            t0 = time.perf_counter()
            for b in data.to_batches():
                for row in b.to_pylist():
                    writer.upsert(row)
            await aw(writer.flush())
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = data.num_rows
        elif op == "append":
            data = load_data(spec["data"], spec.get("rows"))
            if spec.get("existing"):
                # benches/scale.py: the harness created the table (and checked its leaders)
                path = pyfluss_path(spec["table"])
            else:
                path = await pyfluss_create(conn, spec["table"], data.schema, spec["buckets"])
            table = await aw(conn.get_table(path))
            batches = batches_of(data)
            t0, c0 = time.perf_counter(), time.process_time()
            await pyfluss_write_batches(table, batches)
            out["seconds"] = time.perf_counter() - t0
            out["timed_cpu_s"] = time.process_time() - c0
            out["rows"] = data.num_rows
            if not spec.get("keep"):
                await aw(conn.get_admin().drop_table(path, ignore_if_not_exists=True))
        elif op == "upsert":
            # pyfluss's UpsertWriter takes one row at a time (no Arrow batch API): its users
            # write rows from Python, so that is what is measured.
            data = load_data(spec["data"], spec["rows"])
            path = await pyfluss_create(
                conn, spec["table"], data.schema, spec["buckets"], pk=[data.schema.names[0]]
            )
            table = await aw(conn.get_table(path))
            writer = table.new_upsert().create_writer()
            batches = batches_of(data)
            t0, c0 = time.perf_counter(), time.process_time()
            for b in batches:
                for row in b.to_pylist():
                    writer.upsert(row)
            await aw(writer.flush())
            out["seconds"] = time.perf_counter() - t0
            out["timed_cpu_s"] = time.process_time() - c0
            out["rows"] = data.num_rows
            await aw(conn.get_admin().drop_table(path, ignore_if_not_exists=True))
        elif op in ("scan", "stream"):
            table = await aw(conn.get_table(pyfluss_path(spec["table"])))
            t0 = time.perf_counter()
            scanner = await pyfluss_scanner(table, spec["buckets"])
            if op == "scan":
                result = await aw(scanner.to_arrow())
                out["rows"] = result.num_rows
                out["nbytes"] = result.nbytes
            else:
                reader = scanner.to_arrow_batch_reader()
                rows = nbytes = 0
                for b in reader:
                    rows += b.num_rows
                    nbytes += b.nbytes
                out["rows"] = rows
                out["nbytes"] = nbytes
            out["seconds"] = time.perf_counter() - t0
        elif op == "lookup":
            table = await aw(conn.get_table(pyfluss_path(spec["table"])))
            keys = spec["keys"]
            key_col = spec["key_column"]
            # pyfluss's Lookuper holds a lock across each await and its lookup queue waits up to
            # 100 ms (not settable from Python) for a batch to fill, so one Lookuper serves one key
            # at a time. Its batching only shows with many Lookupers in flight: a pool of them,
            # each looping over its share of every group of `batch` keys.
            pool = [table.new_lookup().create_lookuper() for _ in range(spec["pyfluss_lookupers"])]
            lk = pool[0]
            await aw(lk.lookup({key_col: keys[0]}))  # warm the metadata path
            batch = spec["batch"]

            async def drain(lookuper, ks):
                n = 0
                for k in ks:
                    n += (await lookuper.lookup({key_col: k})) is not None
                return n

            found = 0
            t0 = time.perf_counter()
            for i in range(0, len(keys), batch):
                group = keys[i : i + batch]
                res = await aw(
                    asyncio.gather(*(drain(l, group[j :: len(pool)]) for j, l in enumerate(pool)))
                )
                found += sum(res)
            out["batched_seconds"] = time.perf_counter() - t0
            out["batched_keys"] = len(keys)
            out["found"] = found
            # latency: one lookup at a time
            lat = []
            latency_found = 0
            for k in spec["latency_keys"]:
                s = time.perf_counter()
                latency_found += (await aw(lk.lookup({key_col: k}))) is not None
                lat.append(time.perf_counter() - s)
            out["latency_found"] = latency_found
            out["p50_ms"] = percentile(lat, 50) * 1e3
            out["p99_ms"] = percentile(lat, 99) * 1e3
            out["latency_n"] = len(lat)
        elif op == "between":
            # pyfluss has no time-range read: what its user writes by hand. Offsets of the
            # window's ends per bucket (list_offsets by timestamp), subscribe at the starts, poll
            # batches until every bucket reached its end, cut the last batches at the end offset.
            table = await aw(conn.get_table(pyfluss_path(spec["table"])))
            admin = conn.get_admin()
            path = pyfluss_path(spec["table"])
            buckets = list(range(spec["buckets"]))
            t0 = time.perf_counter()
            starts = await aw(admin.list_offsets(
                path, buckets, fluss.OffsetSpec.timestamp(int(spec["start_ms"]))))
            ends = await aw(admin.list_offsets(
                path, buckets, fluss.OffsetSpec.timestamp(int(spec["end_ms"]))))
            todo = {b: (starts[b], ends[b]) for b in buckets if ends[b] > starts[b]}
            parts = []
            if todo:
                scanner = await aw(table.new_scan().create_record_batch_log_scanner())
                scanner.subscribe_buckets({b: s for b, (s, _) in todo.items()})
                reached = {b: s for b, (s, _) in todo.items()}
                deadline = time.monotonic() + RPC_TIMEOUT
                while any(reached[b] < todo[b][1] for b in todo):
                    if time.monotonic() > deadline:
                        raise TimeoutError("time-range poll did not reach the end offsets")
                    for rb in await aw(scanner.poll_record_batch(500)):
                        b = rb.bucket.bucket_id
                        end = todo[b][1]
                        if rb.base_offset >= end:
                            continue
                        keep = min(rb.batch.num_rows, end - rb.base_offset)
                        parts.append(rb.batch.slice(0, keep))
                        reached[b] = max(reached[b], rb.last_offset + 1)
            result = pa.Table.from_batches(parts, schema=table.arrow_schema) if parts else None
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = result.num_rows if result is not None else 0
            out["nbytes"] = result.nbytes if result is not None else 0
        elif op == "idle":
            table = await aw(conn.get_table(pyfluss_path(spec["table"])))
            out["rows"] = 0
            out["seconds"] = 0.0
        else:
            raise ValueError(f"unknown op {op}")
    finally:
        await aw(conn.close(), 30)
    return out


# ------------------------------------------------------------------------------------------
# riverlet (our Python binding over core::blocking)
# ------------------------------------------------------------------------------------------


def riverlet_main(spec: dict) -> dict:
    import riverlet

    op = spec["op"]
    conn = riverlet.connect(spec["bootstrap"])
    out: dict = {}
    try:
        if op == "append":
            data = load_data(spec["data"], spec.get("rows"))
            if spec.get("existing"):
                # benches/scale.py: the harness created the table (and checked its leaders)
                t = conn.table(spec["table"])
            else:
                db = spec["table"].split(".", 1)[0]
                conn.create_database(db, if_not_exists=True)
                t = conn.create_table(spec["table"], data.schema, buckets=spec["buckets"])
            batches = pa.Table.from_batches(batches_of(data), schema=data.schema)
            t0, c0 = time.perf_counter(), time.process_time()
            t.append(batches)
            out["seconds"] = time.perf_counter() - t0
            out["timed_cpu_s"] = time.process_time() - c0
            out["rows"] = data.num_rows
            if spec.get("metrics"):
                # the writer's and the connection's metrics (benches/profile.py --waits)
                out["metrics"] = [
                    m for m in riverlet.metrics()
                    if m["name"].startswith("riverlet_client_writer")
                    or m["labels"].get("api") in ("PRODUCE_LOG", "PUT_KV")
                ]
            if not spec.get("keep"):
                conn.drop_table(spec["table"], if_exists=True)
        elif op == "upsert":
            data = load_data(spec["data"], spec["rows"])
            db = spec["table"].split(".", 1)[0]
            conn.create_database(db, if_not_exists=True)
            t = conn.create_table(
                spec["table"], data.schema, primary_key=data.schema.names[0], buckets=spec["buckets"]
            )
            batches = pa.Table.from_batches(batches_of(data), schema=data.schema)
            t0, c0 = time.perf_counter(), time.process_time()
            t.upsert(batches)
            out["seconds"] = time.perf_counter() - t0
            out["timed_cpu_s"] = time.process_time() - c0
            out["rows"] = data.num_rows
            conn.drop_table(spec["table"], if_exists=True)
        elif op == "create_load_pk":
            data = load_data(spec["data"], spec["rows"])
            db = spec["table"].split(".", 1)[0]
            conn.create_database(db, if_not_exists=True)
            t = conn.create_table(
                spec["table"], data.schema, primary_key=data.schema.names[0], buckets=spec["buckets"]
            )
            t0 = time.perf_counter()
            t.upsert(data)
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = data.num_rows
        elif op == "scan":
            t = conn.table(spec["table"])
            t0 = time.perf_counter()
            result = t.read()
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = result.num_rows
            out["nbytes"] = result.nbytes
        elif op == "stream":
            t = conn.table(spec["table"])
            t0 = time.perf_counter()
            rows = nbytes = 0
            for b in t.scan():
                rows += b.num_rows
                nbytes += b.nbytes
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = rows
            out["nbytes"] = nbytes
        elif op == "between":
            t = conn.table(spec["table"])
            t0 = time.perf_counter()
            result = t.read_between(int(spec["start_ms"]), int(spec["end_ms"]))
            out["seconds"] = time.perf_counter() - t0
            out["rows"] = result.num_rows
            out["nbytes"] = result.nbytes
        elif op == "lookup":
            t = conn.table(spec["table"])
            keys = spec["keys"]
            key_col = spec["key_column"]
            key_type = t.schema.field(key_col).type
            t.lookup(keys[0])  # warm the metadata path
            batch = spec["batch"]
            found = 0
            t0 = time.perf_counter()
            for i in range(0, len(keys), batch):
                ks = pa.table({key_col: pa.array(keys[i : i + batch], type=key_type)})
                found += t.lookup_many(ks).num_rows
            out["batched_seconds"] = time.perf_counter() - t0
            out["batched_keys"] = len(keys)
            out["found"] = found
            lat = []
            latency_found = 0
            for k in spec["latency_keys"]:
                s = time.perf_counter()
                latency_found += t.lookup(k) is not None
                lat.append(time.perf_counter() - s)
            out["latency_found"] = latency_found
            out["p50_ms"] = percentile(lat, 50) * 1e3
            out["p99_ms"] = percentile(lat, 99) * 1e3
            out["latency_n"] = len(lat)
        elif op == "idle":
            conn.table(spec["table"])
            out["rows"] = 0
            out["seconds"] = 0.0
        else:
            raise ValueError(f"unknown op {op}")
    finally:
        conn.close()
    return out


def main() -> None:
    spec = json.loads(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read())
    if spec["contender"] == "pyfluss":
        out = asyncio.run(pyfluss_main(spec))
    elif spec["contender"] == "riverlet":
        out = riverlet_main(spec)
    else:
        raise ValueError(f"unknown contender {spec['contender']}")
    # Peak RSS of this process since exec (the parent's wait4 ru_maxrss would also count the
    # pages the forked child shared with the parent before exec).
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                out["vm_hwm_kib"] = int(line.split()[1])
    except OSError:
        pass
    print(json.dumps(out), flush=True)
    sys.stderr.flush()
    # Skip interpreter teardown: a pyfluss process that used Lookupers can abort (SIGABRT) while
    # its runtime is torn down at exit, after the measurement is done.
    os._exit(0)


if __name__ == "__main__":
    main()
