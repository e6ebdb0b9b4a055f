//! The primary-key changelog fold of a time-range read.
//!
//! A primary-key table's changelog lists, per bucket and in offset order, the changes of each
//! key: `+I` (insert), `-U` / `+U` (the old and new value of an update) and `-D` (delete). A
//! time-range read of such a table returns, for every key changed inside the window, its last
//! value written in the window:
//!
//! - `+I` / `+U` replace the key's value (`+A`, an append-only row, counts the same);
//! - `-D` removes the key: a key whose last change is a delete is not returned, so an insert
//!   followed by a delete yields nothing while a delete followed by a re-insert yields the new
//!   value;
//! - `-U` is ignored: the `+U` that follows it carries the new value.
//!
//! [`ChangelogFold`] keeps one slot per key still alive in the window, pointing at the row that
//! holds its value. Batches are kept only while one of their rows is the current value of a key,
//! and when most retained rows are dead they are compacted into one batch of the live values, so
//! the memory used is proportional to the keys changed in the window, not to the log nor to the
//! table. Keys are the encoded primary key bytes (Fluss's key encoding); the output is sorted by
//! them (bytewise), like Fluss's own merge.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use crate::{Error, Result};

/// What one changelog record does to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyChange {
    /// `+I`, `+U` or `+A`: the row is the key's new value.
    Upsert,
    /// `-D`: the key is gone.
    Delete,
    /// `-U`: the old value of an update; carries nothing new.
    Ignore,
}

impl KeyChange {
    /// From Fluss's change-type byte (0 `+A`, 1 `+I`, 2 `-U`, 3 `+U`, 4 `-D`).
    pub fn from_change_type_byte(b: u8) -> Result<KeyChange> {
        match b {
            0 | 1 | 3 => Ok(KeyChange::Upsert),
            2 => Ok(KeyChange::Ignore),
            4 => Ok(KeyChange::Delete),
            other => Err(Error::corrupt(format!("unknown change type byte {other}"))),
        }
    }
}

/// One changelog record handed to the fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRecord {
    /// The encoded primary key.
    pub key: Vec<u8>,
    /// The record's log offset (strictly increasing within one fold).
    pub offset: i64,
    /// What it does to the key.
    pub change: KeyChange,
    /// The row of the batch it was pushed with that holds its value.
    pub row: usize,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    batch: usize,
    row: usize,
}

/// Folds a changelog, in offset order, to the last value of every key changed in it.
///
/// Use one fold per bucket (a key lives in one bucket; offsets are per bucket).
#[derive(Debug)]
pub struct ChangelogFold {
    schema: SchemaRef,
    slots: HashMap<Vec<u8>, Slot>,
    /// Retained batches (None once no slot points into them).
    batches: Vec<Option<RecordBatch>>,
    /// How many slots point into each batch.
    live: Vec<usize>,
    retained_rows: usize,
    last_offset: Option<i64>,
    records_seen: u64,
    compact_min_rows: usize,
}

impl ChangelogFold {
    /// A fold of rows with `schema` (the schema of every pushed batch).
    pub fn new(schema: SchemaRef) -> ChangelogFold {
        ChangelogFold {
            schema,
            slots: HashMap::new(),
            batches: Vec::new(),
            live: Vec::new(),
            retained_rows: 0,
            last_offset: None,
            records_seen: 0,
            compact_min_rows: 8192,
        }
    }

    /// Sets how many retained rows there must be before a compaction is considered (tests use a
    /// small value to exercise compaction).
    pub fn with_compaction_threshold(mut self, rows: usize) -> ChangelogFold {
        self.compact_min_rows = rows.max(1);
        self
    }

    /// The number of keys currently holding a value.
    pub fn live_keys(&self) -> usize {
        self.slots.len()
    }

    /// The number of rows of pushed batches still held in memory.
    pub fn retained_rows(&self) -> usize {
        self.retained_rows
    }

    /// How many records were pushed.
    pub fn records_seen(&self) -> u64 {
        self.records_seen
    }

    /// Feeds the records of one batch, in offset order; `records[i].row` indexes `batch`.
    pub fn push(
        &mut self,
        batch: &RecordBatch,
        records: impl IntoIterator<Item = ChangeRecord>,
    ) -> Result<()> {
        if batch.schema().fields() != self.schema.fields() {
            return Err(Error::internal(format!(
                "changelog fold: batch schema {:?} differs from the fold's {:?}",
                batch.schema(),
                self.schema
            )));
        }
        let id = self.batches.len();
        self.batches.push(Some(batch.clone()));
        self.live.push(0);
        self.retained_rows += batch.num_rows();
        for rec in records {
            if let Some(last) = self.last_offset {
                if rec.offset <= last {
                    self.finish_batch(id);
                    return Err(Error::internal(format!(
                        "changelog fold: offset {} after offset {last}; records must come in \
                         increasing offset order",
                        rec.offset
                    )));
                }
            }
            if rec.row >= batch.num_rows() {
                self.finish_batch(id);
                return Err(Error::internal(format!(
                    "changelog fold: row {} outside a batch of {} rows",
                    rec.row,
                    batch.num_rows()
                )));
            }
            self.last_offset = Some(rec.offset);
            self.records_seen += 1;
            match rec.change {
                KeyChange::Ignore => {}
                KeyChange::Upsert => {
                    let new = Slot {
                        batch: id,
                        row: rec.row,
                    };
                    self.live[id] += 1;
                    if let Some(old) = self.slots.insert(rec.key, new) {
                        self.release(old.batch);
                    }
                }
                KeyChange::Delete => {
                    if let Some(old) = self.slots.remove(&rec.key) {
                        self.release(old.batch);
                    }
                }
            }
        }
        self.finish_batch(id);
        self.maybe_compact()
    }

    fn finish_batch(&mut self, id: usize) {
        if self.live[id] == 0 {
            self.drop_batch(id);
        }
    }

    fn release(&mut self, batch: usize) {
        self.live[batch] -= 1;
        if self.live[batch] == 0 {
            self.drop_batch(batch);
        }
    }

    fn drop_batch(&mut self, id: usize) {
        if let Some(b) = self.batches[id].take() {
            self.retained_rows -= b.num_rows();
        }
    }

    fn maybe_compact(&mut self) -> Result<()> {
        let live = self.slots.len();
        if self.retained_rows < self.compact_min_rows || self.retained_rows <= 2 * live {
            // Dropping empty bookkeeping keeps `batches` short when nothing is retained.
            if self.retained_rows == 0 && live == 0 {
                self.batches.clear();
                self.live.clear();
            }
            return Ok(());
        }
        let mut entries: Vec<(&Vec<u8>, Slot)> = self.slots.iter().map(|(k, s)| (k, *s)).collect();
        entries.sort_by_key(|(_, s)| (s.batch, s.row));
        let indices: Vec<(usize, usize)> = entries.iter().map(|(_, s)| (s.batch, s.row)).collect();
        let compacted = self.gather(&indices)?;
        let keys: Vec<Vec<u8>> = entries.into_iter().map(|(k, _)| k.clone()).collect();
        self.batches = vec![Some(compacted)];
        self.live = vec![keys.len()];
        self.retained_rows = keys.len();
        for (row, key) in keys.into_iter().enumerate() {
            self.slots.insert(key, Slot { batch: 0, row });
        }
        Ok(())
    }

    /// Gathers rows (batch, row) of the retained batches into one batch.
    fn gather(&self, indices: &[(usize, usize)]) -> Result<RecordBatch> {
        // Map retained batch ids to a dense list.
        let mut dense: HashMap<usize, usize> = HashMap::new();
        let mut sources: Vec<&RecordBatch> = Vec::new();
        let mut mapped = Vec::with_capacity(indices.len());
        for &(b, r) in indices {
            let d = match dense.get(&b) {
                Some(d) => *d,
                None => {
                    let batch = self
                        .batches
                        .get(b)
                        .and_then(Option::as_ref)
                        .ok_or_else(|| {
                            Error::internal("changelog fold: a live row points at a dropped batch")
                        })?;
                    sources.push(batch);
                    dense.insert(b, sources.len() - 1);
                    sources.len() - 1
                }
            };
            mapped.push((d, r));
        }
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for i in 0..self.schema.fields().len() {
            let arrays: Vec<&dyn Array> = sources.iter().map(|b| b.column(i).as_ref()).collect();
            if arrays.is_empty() {
                columns.push(arrow_array::new_empty_array(
                    self.schema.field(i).data_type(),
                ));
            } else {
                columns.push(arrow_select::interleave::interleave(&arrays, &mapped)?);
            }
        }
        let options = RecordBatchOptions::new().with_row_count(Some(indices.len()));
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &options,
        )?)
    }

    /// The last value of every key still alive, sorted by key bytes, as batches of at most
    /// `max_rows` rows (none when no key survived).
    pub fn finish(self, max_rows: usize) -> Result<Vec<RecordBatch>> {
        let mut entries: Vec<(&Vec<u8>, Slot)> = self.slots.iter().map(|(k, s)| (k, *s)).collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::new();
        for chunk in entries.chunks(max_rows.max(1)) {
            let indices: Vec<(usize, usize)> =
                chunk.iter().map(|(_, s)| (s.batch, s.row)).collect();
            out.push(self.gather(&indices)?);
        }
        Ok(out)
    }

    /// The encoded keys alive now with their values' (batch-local) order, sorted: for tests.
    pub fn live_key_list(&self) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = self.slots.keys().cloned().collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("v", DataType::Utf8, true),
        ]))
    }

    /// A batch of (id, value, change) rows; returns the batch and the records starting at
    /// offset `base`.
    fn changes(base: i64, rows: &[(i64, &str, KeyChange)]) -> (RecordBatch, Vec<ChangeRecord>) {
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            ],
        )
        .unwrap();
        let recs = rows
            .iter()
            .enumerate()
            .map(|(i, r)| ChangeRecord {
                key: r.0.to_be_bytes().to_vec(),
                offset: base + i as i64,
                change: r.2,
                row: i,
            })
            .collect();
        (batch, recs)
    }

    fn result(fold: ChangelogFold) -> Vec<(i64, String)> {
        let mut out = Vec::new();
        for b in fold.finish(2).unwrap() {
            let ids = b.column(0).as_primitive::<Int64Type>();
            let vs = b.column(1).as_string::<i32>();
            for i in 0..b.num_rows() {
                out.push((ids.value(i), vs.value(i).to_string()));
            }
        }
        out
    }

    use KeyChange::{Delete as D, Ignore as U_, Upsert as UP};

    fn run(batches: &[&[(i64, &str, KeyChange)]]) -> Vec<(i64, String)> {
        let mut fold = ChangelogFold::new(schema()).with_compaction_threshold(1);
        let mut off = 0;
        for rows in batches {
            let (b, recs) = changes(off, rows);
            off += rows.len() as i64;
            fold.push(&b, recs).unwrap();
        }
        result(fold)
    }

    fn s(v: &[(i64, &str)]) -> Vec<(i64, String)> {
        v.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn key_updated_twice_keeps_last_value() {
        let out = run(&[
            &[(1, "a", UP)],
            &[(1, "a", U_), (1, "b", UP)],
            &[(1, "b", U_), (1, "c", UP)],
        ]);
        assert_eq!(out, s(&[(1, "c")]));
    }

    #[test]
    fn key_updated_once() {
        // The insert happened before the window: only -U/+U are inside.
        let out = run(&[&[(7, "old", U_), (7, "new", UP)]]);
        assert_eq!(out, s(&[(7, "new")]));
    }

    #[test]
    fn deleted_then_reinserted_is_included() {
        let out = run(&[&[(1, "a", UP)], &[(1, "a", D)], &[(1, "again", UP)]]);
        assert_eq!(out, s(&[(1, "again")]));
    }

    #[test]
    fn deleted_key_is_excluded() {
        let out = run(&[&[(1, "a", U_), (1, "b", UP)], &[(1, "b", D)]]);
        assert!(out.is_empty());
    }

    #[test]
    fn inserted_then_deleted_is_excluded() {
        let out = run(&[&[(1, "a", UP), (2, "x", UP)], &[(1, "a", D)]]);
        assert_eq!(out, s(&[(2, "x")]));
    }

    #[test]
    fn window_with_only_a_delete_is_empty() {
        let out = run(&[&[(9, "gone", D)]]);
        assert!(out.is_empty());
    }

    #[test]
    fn update_before_alone_is_ignored() {
        let out = run(&[&[(3, "old", U_)]]);
        assert!(out.is_empty());
    }

    #[test]
    fn output_is_sorted_by_key_bytes_and_chunked() {
        let out = run(&[
            &[(5, "e", UP), (1, "a", UP), (3, "c", UP)],
            &[(2, "b", UP), (4, "d", UP)],
        ]);
        assert_eq!(out, s(&[(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]));
    }

    #[test]
    fn offsets_must_increase() {
        let mut fold = ChangelogFold::new(schema());
        let (b, recs) = changes(10, &[(1, "a", UP)]);
        fold.push(&b, recs).unwrap();
        let (b, recs) = changes(10, &[(2, "b", UP)]);
        let e = fold.push(&b, recs).unwrap_err();
        assert!(e.message().contains("increasing offset order"), "{e}");
    }

    #[test]
    fn memory_is_proportional_to_live_keys() {
        // 1000 batches updating the same 10 keys: retained rows stay bounded.
        let mut fold = ChangelogFold::new(schema()).with_compaction_threshold(64);
        let mut off = 0;
        let mut max_retained = 0;
        for round in 0..1000 {
            let vals: Vec<String> = (0..10).map(|k| format!("{k}-{round}")).collect();
            let rows: Vec<(i64, &str, KeyChange)> =
                (0..10).map(|k| (k as i64, vals[k].as_str(), UP)).collect();
            let (b, recs) = changes(off, &rows);
            off += rows.len() as i64;
            fold.push(&b, recs).unwrap();
            max_retained = max_retained.max(fold.retained_rows());
        }
        assert!(max_retained <= 128, "retained {max_retained}");
        assert_eq!(fold.live_keys(), 10);
        let out = result(fold);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|(k, v)| *v == format!("{k}-999")));
    }

    #[test]
    fn compaction_keeps_values_right() {
        // Many distinct keys with interleaved deletes, compacting at every push.
        let mut fold = ChangelogFold::new(schema()).with_compaction_threshold(1);
        let mut expected = std::collections::BTreeMap::new();
        let mut off = 0;
        for round in 0..50i64 {
            let vals: Vec<String> = (0..7).map(|i| format!("r{round}i{i}")).collect();
            let rows: Vec<(i64, &str, KeyChange)> = (0..7)
                .map(|i| {
                    let key = (round * 3 + i) % 40;
                    let change = if (round + i) % 4 == 0 { D } else { UP };
                    (key, vals[i as usize].as_str(), change)
                })
                .collect();
            for (k, v, c) in &rows {
                match c {
                    UP => {
                        expected.insert(*k, v.to_string());
                    }
                    _ => {
                        expected.remove(k);
                    }
                }
            }
            let (b, recs) = changes(off, &rows);
            off += rows.len() as i64;
            fold.push(&b, recs).unwrap();
        }
        let out = result(fold);
        let exp: Vec<(i64, String)> = expected.into_iter().collect();
        assert_eq!(out, exp);
    }

    #[test]
    fn subset_of_rows_and_change_type_bytes() {
        assert_eq!(KeyChange::from_change_type_byte(1).unwrap(), UP);
        assert_eq!(KeyChange::from_change_type_byte(3).unwrap(), UP);
        assert_eq!(KeyChange::from_change_type_byte(0).unwrap(), UP);
        assert_eq!(KeyChange::from_change_type_byte(2).unwrap(), U_);
        assert_eq!(KeyChange::from_change_type_byte(4).unwrap(), D);
        assert!(KeyChange::from_change_type_byte(9).is_err());
        // Only row 1 of the batch is in the window.
        let (b, mut recs) = changes(0, &[(1, "before", UP), (2, "in", UP), (3, "after", UP)]);
        let mut fold = ChangelogFold::new(schema());
        fold.push(&b, recs.drain(1..2)).unwrap();
        assert_eq!(result(fold), s(&[(2, "in")]));
    }
}
