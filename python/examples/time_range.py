"""Seed scenario: time-range reads of commit time, on a log and a primary-key table."""

import datetime as dt
import time

import pyarrow as pa

import riverlet

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def main() -> None:
    with riverlet.LocalServer() as server, riverlet.connect(server.bootstrap_servers) as conn:
        conn.create_database("seed", if_not_exists=True)
        log = conn.create_table("seed.events", SCHEMA)
        pk = conn.create_table("seed.state", SCHEMA, primary_key=["id"])

        log.append([(1, "before")])
        pk.upsert([(1, "a"), (2, "b")])
        time.sleep(0.05)
        start = now()  # an aware datetime; ints (epoch ms), strings and dates work too
        time.sleep(0.05)
        log.append([(2, "inside"), (3, "inside")])
        pk.upsert([(1, "a2")])
        pk.upsert([(1, "a3")])
        pk.delete([2])
        pk.upsert([(3, "c")])
        time.sleep(0.05)
        end = now()
        time.sleep(0.05)
        log.append([(4, "after")])

        window = log.read_between(start, end).sort_by("id")
        assert window.column("id").to_pylist() == [2, 3]
        # A PK table: each key changed in the window once, with its last value; deleted keys
        # are left out.
        state = pk.read_between(start, end).sort_by("id")
        assert state.to_pylist() == [{"id": 1, "v": "a3"}, {"id": 3, "v": "c"}]
        # The same window as 'yyyy-MM-dd HH:mm:ss.SSS' text in an explicit zone.
        fmt = "%Y-%m-%d %H:%M:%S.%f"
        text = log.read_between(start.strftime(fmt)[:-3], end.strftime(fmt)[:-3], tz="UTC")
        assert text.num_rows == 2
        # Open end: up to now.
        assert log.read_between(start).num_rows == 3
        try:
            log.read_between(end, start)
        except riverlet.InvalidArgumentError as e:
            print("rejected as expected:", e)
        else:
            raise AssertionError("an inverted window must be rejected")
        print(state)


if __name__ == "__main__":
    main()
