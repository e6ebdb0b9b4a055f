//! The seed scenarios (`tests/scenarios/seed.json`) run through the Rust blocking client: the
//! demo prints them, the conformance test asserts them. The scenario file is data; this module
//! only turns its JSON rows into Arrow batches and compares read results with `expect`.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use riverlet::blocking::{Connection, ReadRequest, Table};
use riverlet::metadata::{DataType, PartitionSpec, Schema, TableDescriptor, TablePath, TypeKind};
use riverlet::row::{record_batch_to_rows, rows_to_record_batch, Datum};
use riverlet::{Error, Result};
use serde_json::Value;

/// The seed scenario file, compiled in so the demo needs nothing on disk.
pub const SEED_JSON: &str = include_str!("../../tests/scenarios/seed.json");

/// A parsed scenario file.
pub struct Scenario {
    /// The database every table lives in.
    pub database: String,
    tables: Vec<(String, Value)>,
    reads: Vec<Value>,
}

/// One read of the scenario, executed: what was asked, what came back, what was expected.
pub struct ReadOutcome {
    /// The read's name in the scenario file.
    pub name: String,
    /// A one-line description of the read (table, columns, filter).
    pub query: String,
    /// The rows, sorted by the read's `order_by` column.
    pub batch: RecordBatch,
    /// Whether the rows equal `expect`.
    pub matches: bool,
    /// Expected rows as text, for a mismatch report.
    pub expected: String,
    /// Actual rows as text.
    pub actual: String,
}

impl Scenario {
    /// Parses a scenario file.
    pub fn parse(text: &str) -> Result<Scenario> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid(format!("scenario JSON: {e}")))?;
        let database = v["database"]
            .as_str()
            .ok_or_else(|| Error::invalid("scenario: missing 'database'"))?
            .to_string();
        let tables = v["tables"]
            .as_object()
            .ok_or_else(|| Error::invalid("scenario: missing 'tables'"))?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let reads = v["reads"].as_array().cloned().unwrap_or_default();
        Ok(Scenario {
            database,
            tables,
            reads,
        })
    }

    /// The seed scenarios.
    pub fn seed() -> Result<Scenario> {
        Self::parse(SEED_JSON)
    }

    /// Table names in file order.
    pub fn table_names(&self) -> Vec<&str> {
        self.tables.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The table path of scenario table `name`.
    pub fn path(&self, name: &str) -> TablePath {
        TablePath::new(&self.database, name)
    }

    /// Creates the database and every table (and the partitions its rows need).
    pub fn create_tables(&self, conn: &Connection) -> Result<()> {
        let admin = conn.admin();
        admin.create_database(&self.database, true)?;
        for (name, spec) in &self.tables {
            let descriptor = descriptor_of(spec)?;
            let path = self.path(name);
            admin.create_table(&path, &descriptor, true)?;
            if !descriptor.partition_keys.is_empty() {
                let keys = &descriptor.partition_keys;
                let key_idx: Vec<usize> = keys
                    .iter()
                    .map(|k| descriptor.schema.column_index(k).unwrap_or(0))
                    .collect();
                let mut seen = Vec::new();
                for row in json_rows(spec, "rows") {
                    let values: Vec<String> = key_idx.iter().map(|&i| json_text(&row[i])).collect();
                    if !seen.contains(&values) {
                        let spec = PartitionSpec::new(keys.iter().cloned().zip(values.clone()));
                        admin.create_partition(&path, &spec, true)?;
                        seen.push(values);
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs every read whose `before_upsert` flag equals `before_upsert`.
    pub fn run_reads(&self, conn: &Connection, before_upsert: bool) -> Result<Vec<ReadOutcome>> {
        let mut out = Vec::new();
        for read in &self.reads {
            if read["before_upsert"].as_bool().unwrap_or(false) != before_upsert {
                continue;
            }
            out.push(self.run_read(conn, read)?);
        }
        Ok(out)
    }

    fn run_read(&self, conn: &Connection, read: &Value) -> Result<ReadOutcome> {
        let name = read["name"].as_str().unwrap_or("read").to_string();
        let table_name = read["table"]
            .as_str()
            .ok_or_else(|| Error::invalid(format!("scenario read '{name}': missing 'table'")))?;
        let table = conn.table(&self.path(table_name))?;
        let columns: Vec<String> = read["columns"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let filter = read["filter"].as_str();
        let mut request = ReadRequest::default();
        let mut query = format!("SELECT {} FROM {table_name}", {
            if columns.is_empty() {
                "*".to_string()
            } else {
                columns.join(", ")
            }
        });
        if !columns.is_empty() {
            request.columns = Some(columns.clone());
        }
        if let Some(f) = filter {
            request.filter = Some(f.into());
            query.push_str(&format!(" WHERE {f}"));
        }
        let batches = table.read(&request)?.read_all()?;
        let order_by = read["order_by"].as_str();
        let batch = concat_sorted(&batches, order_by, table.arrow_schema(), &columns)?;
        let actual_rows = batch_to_json(&batch)?;
        let expected_rows = read["expect"].as_array().cloned().unwrap_or_default();
        let matches = rows_equal(&actual_rows, &expected_rows);
        Ok(ReadOutcome {
            name,
            query,
            batch,
            matches,
            expected: Value::Array(expected_rows).to_string(),
            actual: Value::Array(actual_rows).to_string(),
        })
    }
}

fn json_rows(spec: &Value, key: &str) -> Vec<Vec<Value>> {
    spec[key]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r.as_array().cloned())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The table descriptor a scenario table spec describes.
pub fn descriptor_of(spec: &Value) -> Result<TableDescriptor> {
    let columns = spec["columns"]
        .as_array()
        .ok_or_else(|| Error::invalid("scenario table: missing 'columns'"))?;
    let mut text = String::new();
    for (i, c) in columns.iter().enumerate() {
        let pair = c
            .as_array()
            .filter(|p| p.len() == 2)
            .ok_or_else(|| Error::invalid(format!("scenario column {i}: expected [name, type]")))?;
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!(
            "`{}` {}",
            pair[0].as_str().unwrap_or_default(),
            pair[1].as_str().unwrap_or_default()
        ));
    }
    let strings = |key: &str| -> Vec<String> {
        spec[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let primary_key = strings("primary_key");
    let mut cols = riverlet::metadata::parse_columns(&text)?;
    for c in &mut cols {
        if primary_key.contains(&c.name) {
            c.data_type = c.data_type.clone().not_null();
        }
    }
    let mut schema = Schema::builder().from_columns(cols);
    if !primary_key.is_empty() {
        schema = schema.primary_key(primary_key);
    }
    let schema = schema.build()?;
    let buckets = spec["buckets"]
        .as_i64()
        .map(|b| {
            i32::try_from(b)
                .map_err(|_| Error::invalid(format!("buckets {b} does not fit 32 bits")))
        })
        .transpose()?;
    TableDescriptor::builder(schema)
        .partitioned_by(strings("partition_by"))
        .distributed_by(buckets, Vec::<String>::new())
        .build()
}

/// Converts one JSON value to a datum of `data_type` (the scalar types the scenarios use).
pub fn json_to_datum(v: &Value, data_type: &DataType) -> Result<Datum> {
    if v.is_null() {
        return Ok(Datum::Null);
    }
    let bad = || Error::invalid(format!("value {v} does not fit {data_type}"));
    let int = |v: &Value| v.as_i64().ok_or_else(bad);
    Ok(match &data_type.kind {
        TypeKind::Boolean => Datum::Boolean(v.as_bool().ok_or_else(bad)?),
        TypeKind::TinyInt => Datum::TinyInt(i8::try_from(int(v)?).map_err(|_| bad())?),
        TypeKind::SmallInt => Datum::SmallInt(i16::try_from(int(v)?).map_err(|_| bad())?),
        TypeKind::Int => Datum::Int(i32::try_from(int(v)?).map_err(|_| bad())?),
        TypeKind::BigInt => Datum::BigInt(int(v)?),
        TypeKind::Float => Datum::Float(v.as_f64().ok_or_else(bad)? as f32),
        TypeKind::Double => Datum::Double(v.as_f64().ok_or_else(bad)?),
        TypeKind::String | TypeKind::Char { .. } => {
            Datum::String(v.as_str().ok_or_else(bad)?.to_string())
        }
        _ => return Err(bad()),
    })
}

fn datum_to_json(d: &Datum) -> Value {
    match d {
        Datum::Null => Value::Null,
        Datum::Boolean(b) => Value::Bool(*b),
        Datum::TinyInt(i) => Value::from(*i),
        Datum::SmallInt(i) => Value::from(*i),
        Datum::Int(i) => Value::from(*i),
        Datum::BigInt(i) => Value::from(*i),
        Datum::Float(f) => Value::from(*f as f64),
        Datum::Double(f) => Value::from(*f),
        Datum::String(s) => Value::String(s.clone()),
        other => Value::String(format!("{other:?}")),
    }
}

fn rows_equal(actual: &[Value], expected: &[Value]) -> bool {
    actual.len() == expected.len()
        && actual.iter().zip(expected).all(|(a, e)| match (a, e) {
            (Value::Array(a), Value::Array(e)) => {
                a.len() == e.len()
                    && a.iter()
                        .zip(e)
                        .all(|(x, y)| match (x.as_f64(), y.as_f64()) {
                            (Some(x), Some(y)) => x == y,
                            _ => x == y,
                        })
            }
            _ => a == e,
        })
}

/// Writes JSON rows to a table: appends to a log table, upserts into a primary-key table.
pub fn write_rows(table: &Table, rows: &[Vec<Value>]) -> Result<()> {
    let info = table.info();
    let schema = info.schema();
    let types = schema.data_types();
    let datums = rows
        .iter()
        .map(|row| {
            if row.len() != types.len() {
                return Err(Error::invalid(format!(
                    "row {row:?} has {} values, table {} has {} columns",
                    row.len(),
                    info.table_path,
                    types.len()
                )));
            }
            row.iter()
                .zip(&types)
                .zip(schema.column_names())
                .map(|((v, t), name)| {
                    json_to_datum(v, t).map_err(|e| e.context(format!("column '{name}'")))
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let batch = rows_to_record_batch(&table.arrow_schema(), &types, &datums)?;
    if info.descriptor.has_primary_key() {
        let writer = table.new_upsert_writer(None)?;
        writer.upsert(&batch)?.wait()?;
        writer.flush()?;
    } else {
        let writer = table.new_append_writer()?;
        writer.append(&batch)?.wait()?;
        writer.flush()?;
    }
    Ok(())
}

/// Concatenates read batches and sorts them by `order_by` (when given).
pub fn concat_sorted(
    batches: &[RecordBatch],
    order_by: Option<&str>,
    table_schema: SchemaRef,
    columns: &[String],
) -> Result<RecordBatch> {
    let schema = match batches.first() {
        Some(b) => b.schema(),
        None if columns.is_empty() => table_schema,
        None => {
            let idx = columns
                .iter()
                .map(|c| {
                    table_schema
                        .index_of(c)
                        .map_err(|_| Error::invalid(format!("no column '{c}'")))
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(table_schema.project(&idx)?)
        }
    };
    let batch = arrow_select::concat::concat_batches(&schema, batches)?;
    let Some(col) = order_by else {
        return Ok(batch);
    };
    let Ok(idx) = batch.schema().index_of(col) else {
        return Ok(batch);
    };
    let indices = arrow_ord::sort::sort_to_indices(batch.column(idx), None, None)?;
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
        .collect::<std::result::Result<_, _>>()?;
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

/// Rows of a batch as JSON arrays.
pub fn batch_to_json(batch: &RecordBatch) -> Result<Vec<Value>> {
    let schema = Schema::from_arrow(&batch.schema())?;
    let rows = record_batch_to_rows(batch, &schema.data_types())?;
    Ok(rows
        .iter()
        .map(|r| Value::Array(r.iter().map(datum_to_json).collect()))
        .collect())
}
