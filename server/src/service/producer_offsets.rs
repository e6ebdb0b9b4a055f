//! The producer-offset APIs (RegisterProducerOffsets, GetProducerOffsets,
//! DeleteProducerOffsets), answered as Fluss 0.9.1's `CoordinatorService` and
//! `ProducerOffsetsManager` do: a registration is kept until deleted or expired (`ttl_ms`, or
//! the server option `coordinator.producer-offsets.ttl`, Fluss's name, default 24 h);
//! registering again while an
//! unexpired one exists keeps it and answers ALREADY_EXISTS (1); an invalid producer id (the
//! table-name rule) answers INVALID_PRODUCER_ID_EXCEPTION; an unknown producer gets an empty
//! answer. Fluss keeps them in ZooKeeper and the remote dir; here they live in
//! [`PRODUCER_OFFSETS_FILE`] of the data directory (written whole: temporary file, fsync,
//! rename), so they survive a restart. Expired registrations are dropped whenever the file
//! is read (Fluss's periodic cleanup).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use riverlet::acl::Resource;
use riverlet::client::{
    invalid_producer_id, producer_offsets_from_proto, producer_offsets_to_proto, ProducerBucket,
};
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::{Error, Result};

use super::guard::Guarded;
use super::{fluss, lock, Server};

/// The file of the data directory holding the registrations.
pub const PRODUCER_OFFSETS_FILE: &str = "producer_offsets.json";

/// Serializes the read-modify-write of the file (Fluss: ZooKeeper's atomic create).
static FILE_LOCK: Mutex<()> = Mutex::new(());

/// One producer's registration.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Registration {
    expiration_time: i64,
    offsets: BTreeMap<ProducerBucket, i64>,
}

type Registrations = BTreeMap<String, Registration>;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn file_of(dir: &Path) -> PathBuf {
    dir.join(PRODUCER_OFFSETS_FILE)
}

/// The unexpired registrations stored in `dir`.
fn load(dir: &Path) -> Result<Registrations> {
    let path = file_of(dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(Error::from(e).context(format!("reading {}", path.display()))),
    };
    let bad = |why: String| Error::corrupt(format!("{}: {why}", path.display()));
    let doc: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    let now = now_ms();
    let mut out = BTreeMap::new();
    let producers = doc["producers"]
        .as_object()
        .ok_or_else(|| bad("no \"producers\" object".into()))?;
    for (id, p) in producers {
        let expiration_time = p["expiration_time"]
            .as_i64()
            .ok_or_else(|| bad(format!("producer '{id}' has no expiration_time")))?;
        if expiration_time <= now {
            continue;
        }
        let mut offsets = BTreeMap::new();
        for o in p["offsets"].as_array().into_iter().flatten() {
            let field = |k: &str| {
                o[k].as_i64()
                    .ok_or_else(|| bad(format!("producer '{id}': offset without {k}")))
            };
            let bucket = ProducerBucket {
                table_id: field("table_id")?,
                partition_id: o["partition_id"].as_i64(),
                bucket: field("bucket")? as i32,
            };
            offsets.insert(bucket, field("offset")?);
        }
        out.insert(
            id.clone(),
            Registration {
                expiration_time,
                offsets,
            },
        );
    }
    Ok(out)
}

/// Writes `regs` to `dir` (temporary file, fsync, rename).
fn store(dir: &Path, regs: &Registrations) -> Result<()> {
    let producers: serde_json::Map<String, serde_json::Value> = regs
        .iter()
        .map(|(id, r)| {
            let offsets: Vec<serde_json::Value> = r
                .offsets
                .iter()
                .map(|(b, o)| {
                    serde_json::json!({
                        "table_id": b.table_id,
                        "partition_id": b.partition_id,
                        "bucket": b.bucket,
                        "offset": o,
                    })
                })
                .collect();
            (
                id.clone(),
                serde_json::json!({ "expiration_time": r.expiration_time, "offsets": offsets }),
            )
        })
        .collect();
    let doc = serde_json::json!({ "version": 1, "producers": producers });
    let bytes = serde_json::to_vec_pretty(&doc)
        .map_err(|e| Error::internal(format!("encode producer offsets: {e}")))?;
    let path = file_of(dir);
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| Error::from(e).context(format!("writing {}", path.display())))
}

fn check_producer_id(id: &str) -> Result<()> {
    match invalid_producer_id(id) {
        Some(msg) => Err(fluss(error_codes::INVALID_PRODUCER_ID_EXCEPTION, msg)),
        None => Ok(()),
    }
}

/// As Fluss answers a failure that is not an API error: UNKNOWN_SERVER_ERROR naming the
/// producer.
fn failed(what: &str, id: &str, e: Error) -> Error {
    if e.fluss_code().is_some() {
        return e;
    }
    fluss(
        error_codes::UNKNOWN_SERVER_ERROR,
        format!("Failed to {what} producer offsets for producer {id}: {e}"),
    )
}

/// The tables of `id`'s registration (DeleteProducerOffsets checks WRITE on each).
fn registered_tables(dir: &Path, id: &str) -> Vec<i64> {
    if invalid_producer_id(id).is_some() {
        return Vec::new();
    }
    let _g = lock(&FILE_LOCK);
    let mut ids: Vec<i64> = load(dir)
        .ok()
        .and_then(|mut r| r.remove(id))
        .map(|r| r.offsets.keys().map(|b| b.table_id).collect())
        .unwrap_or_default();
    ids.dedup();
    ids
}

impl Server {
    pub(super) fn register_producer_offsets(
        &self,
        r: RegisterProducerOffsetsRequest,
    ) -> Result<RegisterProducerOffsetsResponse> {
        let id = r.producer_id;
        check_producer_id(&id)?;
        let run = || -> Result<bool> {
            let offsets = producer_offsets_from_proto(&r.table_offsets)?;
            let default_ttl =
                i64::try_from(self.config.producer_offsets_ttl.as_millis()).unwrap_or(i64::MAX);
            let expiration_time = now_ms().saturating_add(r.ttl_ms.unwrap_or(default_ttl));
            let dir = &self.config.data_dir;
            let _g = lock(&FILE_LOCK);
            let mut regs = load(dir)?;
            if regs.contains_key(&id) {
                return Ok(false);
            }
            regs.insert(
                id.clone(),
                Registration {
                    expiration_time,
                    offsets,
                },
            );
            store(dir, &regs)?;
            Ok(true)
        };
        let created = run().map_err(|e| failed("register", &id, e))?;
        Ok(RegisterProducerOffsetsResponse {
            result: Some(if created { 0 } else { 1 }),
        })
    }

    pub(super) fn get_producer_offsets(
        &self,
        r: GetProducerOffsetsRequest,
    ) -> Result<GetProducerOffsetsResponse> {
        let id = r.producer_id;
        check_producer_id(&id)?;
        let reg = {
            let _g = lock(&FILE_LOCK);
            load(&self.config.data_dir).map_err(|e| failed("get", &id, e))?
        }
        .remove(&id);
        Ok(match reg {
            None => GetProducerOffsetsResponse::default(),
            Some(reg) => GetProducerOffsetsResponse {
                producer_id: Some(id),
                expiration_time: Some(reg.expiration_time),
                table_offsets: producer_offsets_to_proto(&reg.offsets),
            },
        })
    }

    pub(super) fn delete_producer_offsets(
        &self,
        r: DeleteProducerOffsetsRequest,
    ) -> Result<DeleteProducerOffsetsResponse> {
        let id = r.producer_id;
        check_producer_id(&id)?;
        let run = || -> Result<()> {
            let dir = &self.config.data_dir;
            let _g = lock(&FILE_LOCK);
            let mut regs = load(dir)?;
            if regs.remove(&id).is_some() {
                store(dir, &regs)?;
            }
            Ok(())
        };
        run().map_err(|e| failed("delete", &id, e))?;
        Ok(DeleteProducerOffsetsResponse {})
    }
}

// Fluss's checks: WRITE on each table registered (RegisterProducerOffsets: the request's;
// DeleteProducerOffsets: the stored registration's), and GetProducerOffsets leaves out the
// tables the caller may not READ.
impl Guarded for RegisterProducerOffsetsRequest {
    type Response = RegisterProducerOffsetsResponse;
    fn table_ids(&self, _s: &Server) -> Vec<i64> {
        self.table_offsets.iter().map(|t| t.table_id).collect()
    }
}

impl Guarded for DeleteProducerOffsetsRequest {
    type Response = DeleteProducerOffsetsResponse;
    fn table_ids(&self, s: &Server) -> Vec<i64> {
        registered_tables(&s.config.data_dir, &self.producer_id)
    }
}

impl Guarded for GetProducerOffsetsRequest {
    type Response = GetProducerOffsetsResponse;
    fn filter_response(
        resp: &mut GetProducerOffsetsResponse,
        s: &Server,
        _db: Option<&str>,
        keep: &dyn Fn(&Resource) -> bool,
    ) {
        let c = lock(&s.catalog);
        resp.table_offsets.retain(|t| {
            c.table_by_id(t.table_id)
                .map(|m| keep(&Resource::table(&m.entry.database, &m.entry.name)))
                .unwrap_or(false)
        });
    }
}
