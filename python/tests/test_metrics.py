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
