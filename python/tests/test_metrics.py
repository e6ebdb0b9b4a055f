"""riverlet.metrics(): the client's counters, latencies and writer gauges after real requests."""

from __future__ import annotations

import pyarrow as pa

import riverlet


def _value(samples: list[dict], name: str, **labels: str) -> float:
    return sum(
        s["value"]
        for s in samples
        if s["name"] == name and all(s["labels"].get(k) == v for k, v in labels.items())
    )


def test_requests_bytes_latencies_and_errors_are_counted(conn: riverlet.Connection, db: str) -> None:
    before = riverlet.metrics()
    conn.create_table(f"{db}.m", pa.schema([("id", pa.int64())]))
    t = conn.table(f"{db}.m")
    t.append([{"id": i} for i in range(100)])
    assert t.read().num_rows == 100
    try:
        conn.table(f"{db}.missing")
    except riverlet.TableNotFoundError:
        pass
    after = riverlet.metrics()

    def grew(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert grew("riverlet_client_requests_total", api="PRODUCE_LOG") >= 1
    assert grew("riverlet_client_requests_total", api="FETCH_LOG") >= 1
    assert grew("riverlet_client_request_seconds_count", api="PRODUCE_LOG") >= 1
    assert grew("riverlet_client_bytes_sent_total") > 0
    assert grew("riverlet_client_bytes_received_total") > 0
    assert grew(
        "riverlet_client_request_errors_total", api="GET_TABLE_INFO", code="TABLE_NOT_EXIST"
    ) >= 1
    # the in-process LocalServer records into the same registry
    assert grew("riverlet_server_requests_total", api="PRODUCE_LOG") >= 1
    # every acknowledged write left the writers' gauges as they were
    assert grew("riverlet_client_writer_in_flight_batches") == 0
    assert grew("riverlet_client_writer_buffered_bytes") == 0

    text = riverlet.metrics_text()
    assert "# TYPE riverlet_client_requests_total counter" in text
    assert "# TYPE riverlet_client_request_seconds histogram" in text


def test_a_filtered_read_reports_the_batches_the_server_skipped(
    conn: riverlet.Connection, db: str
) -> None:
    # A table with batch statistics on `id`: each append is one acknowledged batch.
    t = conn.create_table(f"{db}.stats", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                          buckets=1, properties={"table.statistics.columns": "id"})
    for b in range(5):
        t.append([{"id": 10 * b + i, "v": f"r{b}"} for i in range(10)])
    before = riverlet.metrics()
    got = t.read(filter=[("id", ">=", 42)])
    after = riverlet.metrics()
    assert sorted(got.column("id").to_pylist()) == list(range(42, 50))
    skipped = "riverlet_client_scan_skipped_batches_total"
    # batches 0-3 hold ids below 40; only the last one can match
    assert _value(after, skipped, table=f"{db}.stats") - _value(
        before, skipped, table=f"{db}.stats") == 4
