//! Auto-increment columns of primary-key tables: the server gives every newly inserted key the
//! next value of the table's sequence, as Apache Fluss 0.9 does (`AutoIncrementManager`).
//!
//! Rules (Fluss's): a table has at most one auto-increment column, INT or BIGINT, not part of
//! the primary key; a write must name its target columns and leave the auto-increment column
//! out (a full-row writer is rejected with INVALID_TARGET_COLUMN); the value is assigned when a
//! key is inserted and kept by later updates; values start at 1 and are never handed out twice.
//!
//! The sequence is table-wide (Fluss hands each bucket its own range of
//! `table.auto-increment.cache-size` values; values are distinct either way). Durability: the
//! end of the reserved range is written to `{tablets}/{table id}.autoinc` (8 bytes, little
//! endian, fsynced) before a value of a new range is used; after a restart the sequence
//! continues after the reserved range, so values are never reused (a restart can leave a gap,
//! as in Fluss).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use riverlet::error::codes;
use riverlet::{Error, Result};

use crate::catalog::TableMeta;

/// How many values one reservation covers.
const RESERVATION: i64 = 1000;

/// Rejects target columns that would write the auto-increment column, with Fluss's messages.
pub fn check_target_columns(meta: &TableMeta, target: &[i32]) -> Result<()> {
    let Some(idx) = meta.auto_increment else {
        return Ok(());
    };
    let name = &meta.descriptor.schema.columns[idx].name;
    if target.is_empty() {
        return Err(Error::from_fluss(
            codes::INVALID_TARGET_COLUMN,
            format!(
                "The table contains an auto-increment column [{name}], but update target \
                 columns are not explicitly specified. Please specify the update target columns \
                 and exclude the auto-increment column from them."
            ),
        ));
    }
    if target.iter().any(|c| usize::try_from(*c).ok() == Some(idx)) {
        return Err(Error::from_fluss(
            codes::INVALID_TARGET_COLUMN,
            format!(
                "Auto-increment column [{name}] at index {idx} must not be included in target \
                 columns."
            ),
        ));
    }
    Ok(())
}

struct Sequence {
    next: i64,
    reserved_end: i64,
}

/// The sequences of every table with an auto-increment column (created on first use).
pub struct Sequences {
    root: PathBuf,
    map: Mutex<HashMap<i64, Sequence>>,
}

fn file(root: &Path, table_id: i64) -> PathBuf {
    root.join(format!("{table_id}.autoinc"))
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        codes::KV_STORAGE_EXCEPTION,
        format!("auto-increment sequence file {}: {e}", path.display()),
    )
}

impl Sequences {
    /// Sequences whose files live in `root` (the tablets directory).
    pub fn new(root: PathBuf) -> Sequences {
        Sequences {
            root,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The next value of table `table_id`'s sequence.
    pub fn next(&self, table_id: i64) -> Result<i64> {
        let mut map = self
            .map
            .lock()
            .map_err(|_| Error::internal("auto-increment lock poisoned"))?;
        if let std::collections::hash_map::Entry::Vacant(e) = map.entry(table_id) {
            let end = self.load(table_id)?;
            e.insert(Sequence {
                next: end + 1,
                reserved_end: end,
            });
        }
        let seq = map
            .get_mut(&table_id)
            .ok_or_else(|| Error::internal("auto-increment sequence vanished"))?;
        if seq.next > seq.reserved_end {
            let end = seq.reserved_end.saturating_add(RESERVATION);
            self.store(table_id, end)?;
            seq.reserved_end = end;
        }
        let v = seq.next;
        seq.next += 1;
        Ok(v)
    }

    /// Forgets a dropped table's sequence and deletes its file.
    pub fn drop_table(&self, table_id: i64) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(&table_id);
        }
        let _ = std::fs::remove_file(file(&self.root, table_id));
    }

    fn load(&self, table_id: i64) -> Result<i64> {
        let path = file(&self.root, table_id);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let arr: [u8; 8] = bytes
                    .get(..8)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| io_err(&path, "shorter than 8 bytes"))?;
                Ok(i64::from_le_bytes(arr))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(io_err(&path, e)),
        }
    }

    fn store(&self, table_id: i64, end: i64) -> Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.root).map_err(|e| io_err(&self.root, e))?;
        let path = file(&self.root, table_id);
        let tmp = path.with_extension("autoinc.tmp");
        let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
        f.write_all(&end.to_le_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| io_err(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io_err(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_distinct_across_restarts() {
        let dir = std::env::temp_dir().join(format!("riverlet-autoinc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Sequences::new(dir.clone());
        assert_eq!((s.next(7).unwrap(), s.next(7).unwrap()), (1, 2));
        assert_eq!(s.next(8).unwrap(), 1);
        drop(s);
        // A restart continues after the reserved range: nothing handed out is reused.
        let s = Sequences::new(dir.clone());
        assert_eq!(s.next(7).unwrap(), RESERVATION + 1);
        s.drop_table(7);
        assert_eq!(s.next(7).unwrap(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
