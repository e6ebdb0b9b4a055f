"""flink_session.sh's writer, checker and REST client (run with the repository's .venv python,
which has Riverlet's Python package; pyarrow comes with it).

  customers BOOTSTRAP DB                 upsert the 40 customers of the lookup join
  orders BOOTSTRAP DB START END          append orders START..END-1
  stream BOOTSTRAP DB START STOPFILE OUTFILE
                                         append orders START, START+1, ... in batches of 10 every
                                         0.2 s until STOPFILE exists, then write the next id (the
                                         number of orders written) to OUTFILE; an append that fails
                                         ends it with status 1 (its rows may be in part written)
  await-leaders BOOTSTRAP DB TIMEOUT     wait until every bucket of the job's four tables has a leader;
                                         exit 1 (naming the tables) after TIMEOUT s: Apache Fluss
                                         0.9.1's create-table race (tests/README.md) left one without
  leaders BOOTSTRAP DB...                print the id of the tablet server leading the most buckets
                                         of the jobs' tables (it must lead a bucket of every
                                         database's orders and totals; exit 1 otherwise)
  check BOOTSTRAP DB N TIMEOUT           poll `enriched` and `totals` until they equal what N orders
                                         give (computed here from the generator, never from a read);
                                         on timeout print the differences and exit 1
  rest URL wait-slots TMS SLOTS TIMEOUT  wait until the session cluster has TMS TaskManagers, SLOTS slots
  rest URL wait-running JOB TIMEOUT      wait until the job and every one of its tasks are RUNNING
  rest URL wait-checkpoint JOB AFTER TIMEOUT
                                         wait until the job has completed more than AFTER checkpoints
                                         (prints the completed count)
  rest URL wait-restarted JOB BEFORE TIMEOUT
                                         wait until the job's numRestarts is above BEFORE
  rest URL restarts JOB                  print numRestarts
  rest URL completed JOB                 print the number of completed checkpoints
  rest URL summary JOB                   print state, restarts, completed checkpoints, restored one
  rest URL cancel JOB                    cancel the job and wait until it is CANCELED

The rows: customer c (0..39) is named "c<c>"; order i belongs to customer (7 i) mod 45 (the
customers 40..44 do not exist: the LEFT JOIN gives them no name, the inner join drops them) and
has the amount (13 i) mod 100 + 1.
"""

import json
import sys
import time
import urllib.request

CUSTOMERS = 40


def customer_of(i):
    return (i * 7) % 45


def amount_of(i):
    return (i * 13) % 100 + 1


def expected(n):
    enriched = {}
    totals = {}
    for i in range(n):
        c = customer_of(i)
        name = f"c{c}" if c < CUSTOMERS else None
        enriched[i] = (c, name, amount_of(i))
        if name is not None:
            cnt, s = totals.get(c, (0, 0))
            totals[c] = (cnt + 1, s + amount_of(i))
    return enriched, {c: (f"c{c}", cnt, s) for c, (cnt, s) in totals.items()}


def connect(bootstrap):
    import riverlet

    return riverlet.connect(bootstrap)


def cmd_customers(bootstrap, db):
    import pyarrow as pa

    conn = connect(bootstrap)
    ids = list(range(CUSTOMERS))
    conn.table(f"{db}.customers").upsert(
        pa.table({"customer_id": pa.array(ids, pa.int32()), "name": [f"c{c}" for c in ids]}))
    conn.close()


def cmd_orders(bootstrap, db, start, end):
    import pyarrow as pa

    conn = connect(bootstrap)
    ids = list(range(int(start), int(end)))
    conn.table(f"{db}.orders").append(pa.table({
        "order_id": pa.array(ids, pa.int64()),
        "customer_id": pa.array([customer_of(i) for i in ids], pa.int32()),
        "amount": pa.array([amount_of(i) for i in ids], pa.int32()),
    }))
    conn.close()


def cmd_stream(bootstrap, db, start, stopfile, outfile):
    import os

    import pyarrow as pa

    conn = connect(bootstrap)
    orders = conn.table(f"{db}.orders")
    i = int(start)
    while not os.path.exists(stopfile):
        ids = list(range(i, i + 10))
        try:
            orders.append(pa.table({
                "order_id": pa.array(ids, pa.int64()),
                "customer_id": pa.array([customer_of(k) for k in ids], pa.int32()),
                "amount": pa.array([amount_of(k) for k in ids], pa.int32()),
            }))
        except Exception as e:
            print(f"{db}: the append of orders {ids[0]}..{ids[-1]} failed: {e}", flush=True)
            sys.exit(1)
        i += 10
        time.sleep(0.2)
    conn.close()
    with open(outfile, "w") as f:
        f.write(f"{i}\n")
    print(f"{db}: the feeder wrote orders {start}..{i - 1}", flush=True)


TABLES = ("orders", "customers", "enriched", "totals")


def cmd_await_leaders(bootstrap, db, timeout):
    conn = connect(bootstrap)
    deadline = time.monotonic() + float(timeout)
    waiting = list(TABLES)
    while waiting:
        waiting = [t for t in waiting
                   if any(b["leader_id"] is None for b in conn.table(f"{db}.{t}").bucket_leaders())]
        if waiting and time.monotonic() > deadline:
            conn.close()
            print(f"{db}: no leader for every bucket of {waiting} within {timeout} s",
                  file=sys.stderr)
            sys.exit(1)
        if waiting:
            time.sleep(0.5)
    conn.close()


def cmd_leaders(bootstrap, *dbs):
    """Print the tablet server to kill: the one leading the most buckets of the jobs' tables,
    provided it leads a bucket of each database's source (orders) and counting sink (totals)."""
    conn = connect(bootstrap)
    led = {}
    for db in dbs:
        for t in TABLES:
            ids = [b["leader_id"] for b in conn.table(f"{db}.{t}").bucket_leaders()]
            print(f"{db}.{t}: bucket leaders {ids}", file=sys.stderr)
            led[(db, t)] = ids
    conn.close()
    count = {}
    for ids in led.values():
        for i in ids:
            if i is not None:
                count[i] = count.get(i, 0) + 1
    victim = max(sorted(count), key=lambda i: count[i])
    for db in dbs:
        for t in ("orders", "totals"):
            if victim not in led[(db, t)]:
                print(f"tablet server {victim} leads no bucket of {db}.{t}: {led[(db, t)]}",
                      file=sys.stderr)
                sys.exit(1)
    print(victim)


def read_sinks(conn, db):
    e = conn.table(f"{db}.enriched").read().to_pylist()
    t = conn.table(f"{db}.totals").read().to_pylist()
    enriched = {r["order_id"]: (r["customer_id"], r["customer_name"], r["amount"]) for r in e}
    totals = {r["customer_id"]: (r["customer_name"], r["orders"], r["amount"]) for r in t}
    return enriched, totals, len(e), len(t)


def diff(name, want, got):
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    wrong = sorted(k for k in set(want) & set(got) if want[k] != got[k])
    if not (missing or extra or wrong):
        return None
    return (f"{name}: {len(missing)} keys missing {missing[:5]}, {len(extra)} unexpected "
            f"{extra[:5]}, {len(wrong)} wrong "
            + ", ".join(f"{k}: want {want[k]} got {got[k]}" for k in wrong[:5]))


def cmd_check(bootstrap, db, n, timeout):
    want_e, want_t = expected(int(n))
    conn = connect(bootstrap)
    deadline = time.monotonic() + float(timeout)
    problems = ["nothing read yet"]
    while time.monotonic() < deadline:
        try:
            got_e, got_t, rows_e, rows_t = read_sinks(conn, db)
        except Exception as e:  # a read during a failover: try again until the deadline
            problems = [f"read failed: {e}"]
            time.sleep(1)
            continue
        problems = [p for p in (diff(f"{db}.enriched", want_e, got_e),
                                diff(f"{db}.totals", want_t, got_t)) if p]
        if rows_e != len(got_e) or rows_t != len(got_t):
            problems.append(f"a key read twice: {rows_e} rows / {len(got_e)} keys in enriched, "
                            f"{rows_t} rows / {len(got_t)} keys in totals")
        if not problems:
            conn.close()
            print(f"{db}: enriched has the {len(want_e)} orders, totals the {len(want_t)} "
                  f"customers' counts and sums of {n} orders")
            return 0
        time.sleep(1)
    conn.close()
    print(f"{db}: waited {timeout} s for the sinks to hold exactly what {n} orders give; "
          f"last differences:\n  " + "\n  ".join(problems))
    return 1


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def poll(timeout, what, probe):
    deadline = time.monotonic() + float(timeout)
    last = None
    while time.monotonic() < deadline:
        try:
            ok, last = probe()
            if ok:
                return last
        except Exception as e:  # the REST endpoint restarting, a job not yet known
            last = f"error: {e}"
        time.sleep(1)
    print(f"waited {timeout} s for {what}; last seen: {last}")
    sys.exit(1)


def cmd_rest(url, action, *args):
    if action == "wait-slots":
        tms, slots, timeout = int(args[0]), int(args[1]), args[2]

        def probe():
            o = get(f"{url}/overview")
            return o["taskmanagers"] == tms and o["slots-total"] == slots, o
        poll(timeout, f"{tms} TaskManagers with {slots} slots in all at {url}", probe)
    elif action == "wait-running":
        job, timeout = args[0], args[1]

        def probe():
            j = get(f"{url}/jobs/{job}")
            states = [v["status"] for v in j["vertices"]]
            return j["state"] == "RUNNING" and all(s == "RUNNING" for s in states), \
                (j["state"], states)
        poll(timeout, f"job {job} and all its tasks RUNNING", probe)
    elif action == "wait-checkpoint":
        job, after, timeout = args[0], int(args[1]), args[2]

        def probe():
            c = get(f"{url}/jobs/{job}/checkpoints")["counts"]["completed"]
            return c > after, c
        print(poll(timeout, f"job {job} to complete a checkpoint after its {after}th", probe))
    elif action == "wait-restarted":
        job, before, timeout = args[0], int(args[1]), args[2]

        def probe():
            m = get(f"{url}/jobs/{job}/metrics?get=numRestarts")
            n = int(m[0]["value"]) if m else -1
            return n > before, n
        print(poll(timeout, f"job {job} to restart (numRestarts above {before})", probe))
    elif action == "restarts":
        m = get(f"{url}/jobs/{args[0]}/metrics?get=numRestarts")
        print(int(m[0]["value"]) if m else -1)
    elif action == "completed":
        print(get(f"{url}/jobs/{args[0]}/checkpoints")["counts"]["completed"])
    elif action == "summary":
        job = args[0]
        j = get(f"{url}/jobs/{job}")
        c = get(f"{url}/jobs/{job}/checkpoints")
        m = get(f"{url}/jobs/{job}/metrics?get=numRestarts")
        restarts = int(m[0]["value"]) if m else -1
        restored = (c.get("latest") or {}).get("restored")
        try:  # why the job restarted: the root exception of each failure Flink kept
            h = get(f"{url}/jobs/{job}/exceptions")
            causes = [f"{e.get('exceptionName')} in {e.get('taskName') or 'the job'}"
                      for e in h.get("exceptionHistory", {}).get("entries", [])]
        except Exception as e:
            causes = [f"(exception history unavailable: {e})"]
        print(json.dumps({"state": j["state"], "restarts": restarts, "failures": causes,
                          "completed": c["counts"]["completed"],
                          "restored": None if not restored else
                          {"id": restored["id"], "is_savepoint": restored["is_savepoint"]}}))
    elif action == "state":
        print(get(f"{url}/jobs/{args[0]}")["state"])
    elif action == "tasks":
        # Where each subtask is and since when: one line per vertex, for a failure's report.
        job = args[0]
        now = time.time() * 1000
        for v in get(f"{url}/jobs/{job}")["vertices"]:
            d = get(f"{url}/jobs/{job}/vertices/{v['id']}")
            subs = ", ".join(
                f"{t['subtask']} {t['status']}@{t.get('taskmanager-id', t.get('host', '?'))}"
                f" #{t.get('attempt', '?')}"
                f" {max(0, int((now - t['start-time']) / 1000)) if t.get('start-time', -1) > 0 else '?'}s"
                for t in d["subtasks"])
            print(f"  {v['name'][:44]}: {subs}")
    elif action == "cancel":
        job = args[0]
        req = urllib.request.Request(f"{url}/jobs/{job}?mode=cancel", method="PATCH")
        urllib.request.urlopen(req, timeout=10).read()

        def probe():
            s = get(f"{url}/jobs/{job}")["state"]
            return s in ("CANCELED", "FAILED", "FINISHED"), s
        poll(60, f"job {job} to be canceled", probe)
    else:
        raise SystemExit(f"unknown rest action {action}")


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "customers":
        cmd_customers(*rest)
    elif cmd == "orders":
        cmd_orders(*rest)
    elif cmd == "leaders":
        cmd_leaders(*rest)
    elif cmd == "await-leaders":
        cmd_await_leaders(*rest)
    elif cmd == "stream":
        cmd_stream(*rest)
    elif cmd == "check":
        sys.exit(cmd_check(*rest))
    elif cmd == "rest":
        cmd_rest(*rest)
    else:
        raise SystemExit(__doc__)
