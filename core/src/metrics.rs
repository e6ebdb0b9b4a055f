//! Client and server metrics: their names, and Riverlet's in-memory recorder for the `metrics`
//! facade that renders them in Prometheus's text format.
//!
//! The core and the embedded server record through the `metrics` macros, so an application
//! that installs its own recorder (any `metrics` exporter) gets them too. Without one, nothing
//! is kept. The CLI's server (`riverlet serve --metrics-port`) and the bindings install
//! [`install`]'s recorder and read it with [`render_prometheus`] or [`snapshot`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use metrics::{
    Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};

/// Requests sent by the client, by `api` (counter).
pub const CLIENT_REQUESTS: &str = "riverlet_client_requests_total";
/// Client requests that failed, by `api` and `code` (a Fluss error name, or the error kind
/// when the server sent none) (counter).
pub const CLIENT_REQUEST_ERRORS: &str = "riverlet_client_request_errors_total";
/// Time from sending a request to its response, by `api` (histogram, seconds).
pub const CLIENT_REQUEST_SECONDS: &str = "riverlet_client_request_seconds";
/// Request bytes the client sent (counter).
pub const CLIENT_BYTES_SENT: &str = "riverlet_client_bytes_sent_total";
/// Response bytes the client received (counter).
pub const CLIENT_BYTES_RECEIVED: &str = "riverlet_client_bytes_received_total";
/// Bytes queued in writers and not yet acknowledged, over all writers (gauge).
pub const CLIENT_WRITER_BUFFERED_BYTES: &str = "riverlet_client_writer_buffered_bytes";
/// Write batches sent and not yet acknowledged, over all writers (gauge).
pub const CLIENT_WRITER_IN_FLIGHT_BATCHES: &str = "riverlet_client_writer_in_flight_batches";
/// Produce / put requests sent by writers, by `api` (counter; with
/// [`CLIENT_WRITER_REQUEST_BATCHES`], the batches carried per request).
pub const CLIENT_WRITER_REQUESTS: &str = "riverlet_client_writer_requests_total";
/// Batches carried by writers' produce / put requests, by `api` (counter).
pub const CLIENT_WRITER_REQUEST_BATCHES: &str = "riverlet_client_writer_request_batches_total";
/// Encoded batch bytes carried by writers' produce / put requests, by `api` (counter).
pub const CLIENT_WRITER_REQUEST_BYTES: &str = "riverlet_client_writer_request_bytes_total";
/// Time from sending a write batch to its answer (histogram, seconds; its sum over the wall
/// time is the mean number of batches in flight).
pub const CLIENT_WRITER_BATCH_IN_FLIGHT_SECONDS: &str =
    "riverlet_client_writer_batch_in_flight_seconds";
/// Time a caller waited for room in a writer's buffer (`buffer_memory`), recorded for each
/// write that had to wait (histogram, seconds).
pub const CLIENT_WRITER_BUFFER_WAIT_SECONDS: &str = "riverlet_client_writer_buffer_wait_seconds";
/// Time one write batch took to encode (Arrow IPC and compression, or KV records) on the
/// blocking pool (histogram, seconds).
pub const CLIENT_WRITER_ENCODE_SECONDS: &str = "riverlet_client_writer_encode_seconds";
/// Time a writer's task slept, by what it was waiting for (`on`: `writes` when nothing was
/// being encoded or in flight, `encoding`, `acks`, `encoding_and_acks`) (histogram, seconds).
pub const CLIENT_WRITER_TASK_WAIT_SECONDS: &str = "riverlet_client_writer_task_wait_seconds";
/// Log batches the server left out of scans by their statistics (filter pushdown), as the
/// server reported them, by `table` (`db.table`) (counter).
pub const CLIENT_SCAN_SKIPPED_BATCHES: &str = "riverlet_client_scan_skipped_batches_total";
/// Log batches the server left out of FetchLog answers by their statistics, by `table`
/// (counter).
pub const SERVER_FETCH_SKIPPED_BATCHES: &str = "riverlet_server_fetch_skipped_batches_total";
/// Requests the server answered, by `api` (counter).
pub const SERVER_REQUESTS: &str = "riverlet_server_requests_total";
/// Requests the server answered with an error, by `api` and `code` (counter).
pub const SERVER_REQUEST_ERRORS: &str = "riverlet_server_request_errors_total";
/// Time a request waited on the server between being read from its connection and being
/// handled, by `api` (histogram, seconds).
pub const SERVER_REQUEST_QUEUED_SECONDS: &str = "riverlet_server_request_queued_seconds";
/// Time the server took to handle a request, by `api` (histogram, seconds).
pub const SERVER_REQUEST_SECONDS: &str = "riverlet_server_request_seconds";
/// Request bytes the server received (counter).
pub const SERVER_BYTES_RECEIVED: &str = "riverlet_server_bytes_received_total";
/// Response bytes the server sent (counter).
pub const SERVER_BYTES_SENT: &str = "riverlet_server_bytes_sent_total";
/// Open client connections of the server (gauge).
pub const SERVER_CONNECTIONS: &str = "riverlet_server_connections";

/// Upper bounds of the latency histograms' buckets, in seconds.
const LATENCY_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// A metric's identity: its name and its labels, sorted.
type Id = (String, Vec<(String, String)>);

fn id_of(key: &Key) -> Id {
    let mut labels: Vec<(String, String)> = key
        .labels()
        .map(|l| (l.key().to_string(), l.value().to_string()))
        .collect();
    labels.sort();
    (key.name().to_string(), labels)
}

/// A histogram with fixed buckets (cumulative counts are computed when rendered).
struct Buckets {
    counts: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_bits: AtomicU64,
}

impl Buckets {
    fn new() -> Self {
        Buckets {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_bits: AtomicU64::new(0f64.to_bits()),
        }
    }

    fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn sum(&self) -> f64 {
        f64::from_bits(self.sum_bits.load(Ordering::Relaxed))
    }
}

impl HistogramFn for Buckets {
    fn record(&self, value: f64) {
        let slot = LATENCY_BUCKETS
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.counts[slot].fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + value).to_bits())
            });
    }
}

/// The metrics recorded since [`install`], kept in memory.
#[derive(Default)]
pub struct Registry {
    counters: Mutex<BTreeMap<Id, Arc<AtomicU64>>>,
    gauges: Mutex<BTreeMap<Id, Arc<AtomicU64>>>,
    histograms: Mutex<BTreeMap<Id, Arc<Buckets>>>,
    help: Mutex<BTreeMap<String, String>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a map was held leaves it consistent (inserts are single operations).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::default);

struct Installed(&'static Registry);

impl Recorder for Installed {
    fn describe_counter(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        locked(&self.0.help).insert(key.as_str().to_string(), description.to_string());
    }
    fn describe_gauge(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        locked(&self.0.help).insert(key.as_str().to_string(), description.to_string());
    }
    fn describe_histogram(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        locked(&self.0.help).insert(key.as_str().to_string(), description.to_string());
    }
    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        let c = locked(&self.0.counters)
            .entry(id_of(key))
            .or_default()
            .clone();
        Counter::from_arc(c)
    }
    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        let g = locked(&self.0.gauges)
            .entry(id_of(key))
            .or_insert_with(|| Arc::new(AtomicU64::new(0f64.to_bits())))
            .clone();
        Gauge::from_arc(g)
    }
    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        let h = locked(&self.0.histograms)
            .entry(id_of(key))
            .or_insert_with(|| Arc::new(Buckets::new()))
            .clone();
        Histogram::from_arc(h)
    }
}

/// Installs Riverlet's recorder as the process's `metrics` recorder. Returns false when the
/// program installed another one first (its recorder then receives Riverlet's metrics, and
/// [`render_prometheus`] stays empty). Idempotent.
pub fn install() -> bool {
    static INSTALLED: LazyLock<bool> =
        LazyLock::new(|| metrics::set_global_recorder(Installed(&REGISTRY)).is_ok());
    *INSTALLED
}

/// Whether [`install`] installed Riverlet's recorder.
pub fn installed() -> bool {
    install()
}

fn labels_text(labels: &[(String, String)], extra: Option<(&str, String)>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{v}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn header(out: &mut String, help: &BTreeMap<String, String>, name: &str, kind: &str) {
    if let Some(h) = help.get(name) {
        let _ = writeln!(out, "# HELP {name} {}", h.replace('\n', " "));
    }
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Everything recorded, in Prometheus's text exposition format (version 0.0.4).
pub fn render_prometheus() -> String {
    let reg = &*REGISTRY;
    let help = locked(&reg.help).clone();
    let mut out = String::new();
    let mut last = String::new();
    for ((name, labels), v) in locked(&reg.counters).iter() {
        if *name != last {
            header(&mut out, &help, name, "counter");
            last = name.clone();
        }
        let _ = writeln!(
            out,
            "{name}{} {}",
            labels_text(labels, None),
            v.load(Ordering::Relaxed)
        );
    }
    for ((name, labels), v) in locked(&reg.gauges).iter() {
        if *name != last {
            header(&mut out, &help, name, "gauge");
            last = name.clone();
        }
        let value = f64::from_bits(v.load(Ordering::Relaxed));
        let _ = writeln!(out, "{name}{} {value}", labels_text(labels, None));
    }
    for ((name, labels), h) in locked(&reg.histograms).iter() {
        if *name != last {
            header(&mut out, &help, name, "histogram");
            last = name.clone();
        }
        let mut cumulative = 0;
        for (i, bound) in LATENCY_BUCKETS.iter().enumerate() {
            cumulative += h.counts[i].load(Ordering::Relaxed);
            let le = labels_text(labels, Some(("le", bound.to_string())));
            let _ = writeln!(out, "{name}_bucket{le} {cumulative}");
        }
        let le = labels_text(labels, Some(("le", "+Inf".to_string())));
        let _ = writeln!(out, "{name}_bucket{le} {}", h.count());
        let _ = writeln!(out, "{name}_sum{} {}", labels_text(labels, None), h.sum());
        let _ = writeln!(
            out,
            "{name}_count{} {}",
            labels_text(labels, None),
            h.count()
        );
    }
    out
}

/// One recorded value, for bindings that return metrics as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric's name (for a histogram: its `_count` and `_sum` are separate samples).
    pub name: String,
    /// Its labels, sorted by name.
    pub labels: Vec<(String, String)>,
    /// Its value.
    pub value: f64,
}

/// Every counter and gauge, and each histogram's `_count` and `_sum`.
pub fn snapshot() -> Vec<Sample> {
    let reg = &*REGISTRY;
    let mut out = Vec::new();
    for ((name, labels), v) in locked(&reg.counters).iter() {
        out.push(Sample {
            name: name.clone(),
            labels: labels.clone(),
            value: v.load(Ordering::Relaxed) as f64,
        });
    }
    for ((name, labels), v) in locked(&reg.gauges).iter() {
        out.push(Sample {
            name: name.clone(),
            labels: labels.clone(),
            value: f64::from_bits(v.load(Ordering::Relaxed)),
        });
    }
    for ((name, labels), h) in locked(&reg.histograms).iter() {
        for (suffix, value) in [("_count", h.count() as f64), ("_sum", h.sum())] {
            out.push(Sample {
                name: format!("{name}{suffix}"),
                labels: labels.clone(),
                value,
            });
        }
    }
    out
}

/// Records one finished client request (called by the connection for every request).
pub(crate) fn client_request(
    api: &'static str,
    sent: usize,
    received: usize,
    seconds: f64,
    error: Option<&crate::Error>,
) {
    metrics::counter!(CLIENT_REQUESTS, "api" => api).increment(1);
    metrics::counter!(CLIENT_BYTES_SENT).increment(sent as u64);
    metrics::counter!(CLIENT_BYTES_RECEIVED).increment(received as u64);
    metrics::histogram!(CLIENT_REQUEST_SECONDS, "api" => api).record(seconds);
    if let Some(e) = error {
        metrics::counter!(CLIENT_REQUEST_ERRORS, "api" => api, "code" => error_label(e))
            .increment(1);
    }
}

/// The `code` label of an error: Fluss's code name when the server sent one, else the kind.
pub fn error_label(e: &crate::Error) -> String {
    match e.fluss_code() {
        Some(code) => crate::error::codes::name_of(code).to_string(),
        None => e.kind().as_str().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_gauges_and_histograms() {
        assert!(install());
        metrics::counter!("riverlet_test_total", "api" => "Fetch").increment(3);
        metrics::gauge!("riverlet_test_gauge").set(2.5);
        metrics::histogram!("riverlet_test_seconds").record(0.003);
        metrics::histogram!("riverlet_test_seconds").record(7.0);
        let text = render_prometheus();
        assert!(
            text.contains("# TYPE riverlet_test_total counter"),
            "{text}"
        );
        assert!(
            text.contains("riverlet_test_total{api=\"Fetch\"} 3"),
            "{text}"
        );
        assert!(text.contains("riverlet_test_gauge 2.5"), "{text}");
        assert!(
            text.contains("riverlet_test_seconds_bucket{le=\"0.005\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("riverlet_test_seconds_bucket{le=\"+Inf\"} 2"),
            "{text}"
        );
        assert!(text.contains("riverlet_test_seconds_count 2"), "{text}");
        let s = snapshot();
        assert!(s
            .iter()
            .any(|x| x.name == "riverlet_test_seconds_sum" && x.value == 7.003));
    }
}
