//! Schema evolution: the one kind of change Riverlet applies, `ADD COLUMN` (nullable, at the
//! end, as Fluss 0.9's AlterTable allows it), and how data written under an older schema id is
//! presented in a newer schema (the added columns are null).
//!
//! Because columns are only ever appended, an older schema is a prefix of every newer one:
//! column `i` of an old row is column `i` of the current schema, and the columns after the old
//! row's end are the added ones.

use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use super::{Column, DataType, Schema};
use crate::row::Datum;
use crate::{Error, Result};

/// A column for [`Schema::with_added_columns`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddColumn {
    /// Its name (new in the table).
    pub name: String,
    /// Its type; must be nullable.
    pub data_type: DataType,
    /// Its comment.
    pub comment: Option<String>,
}

impl AddColumn {
    /// A nullable column without comment.
    pub fn new(name: impl Into<String>, data_type: DataType) -> AddColumn {
        AddColumn {
            name: name.into(),
            data_type,
            comment: None,
        }
    }
}

impl AddColumn {
    /// The columns of an Arrow schema (their nullability as declared), as every binding takes
    /// them.
    pub fn from_arrow(schema: &arrow_schema::Schema) -> Result<Vec<AddColumn>> {
        schema
            .fields()
            .iter()
            .map(|f| {
                Ok(AddColumn {
                    name: f.name().clone(),
                    data_type: super::schema::from_arrow_field(f)?,
                    comment: f.metadata().get("comment").cloned(),
                })
            })
            .collect()
    }

    /// The columns of a column list in SQL form (`n BIGINT, note STRING`).
    pub fn from_sql(text: &str) -> Result<Vec<AddColumn>> {
        Ok(super::parse_columns(text)?
            .into_iter()
            .map(|c| AddColumn {
                name: c.name,
                data_type: c.data_type,
                comment: c.comment,
            })
            .collect())
    }
}

impl Schema {
    /// This schema with `columns` appended (each gets the next column id), or an
    /// InvalidArgument naming the column that cannot be added: an existing name or a NOT NULL
    /// type (rows written before have no value for it).
    pub fn with_added_columns(&self, columns: &[AddColumn]) -> Result<Schema> {
        if columns.is_empty() {
            return Err(Error::invalid("ADD COLUMN needs at least one column"));
        }
        let mut b = Schema::builder()
            .from_columns(self.columns.clone())
            .highest_field_id(self.highest_field_id);
        for c in columns {
            if self.column_index(&c.name).is_some() {
                return Err(Error::invalid(format!(
                    "cannot add column '{}': the table already has a column of that name",
                    c.name
                )));
            }
            if !c.data_type.nullable {
                return Err(Error::invalid(format!(
                    "cannot add column '{}' of type {}: an added column must be nullable (the \
                     rows written before have no value for it)",
                    c.name, c.data_type
                )));
            }
            b = b.column(c.name.clone(), c.data_type.clone());
            if let Some(comment) = &c.comment {
                b = b.with_comment(comment.clone());
            }
        }
        if let Some(pk) = &self.primary_key {
            b = b.primary_key(pk.clone());
        }
        for a in &self.auto_increment_columns {
            b = b.auto_increment(a.clone());
        }
        let mut out = b.build()?;
        // Aggregation functions of the existing columns are kept as they are.
        for (new, old) in out.columns.iter_mut().zip(&self.columns) {
            new.agg_function = old.agg_function.clone();
        }
        Ok(out)
    }

    /// Whether `older` is this schema's ancestor under add-only evolution: the same columns
    /// (name, type, id) as this schema's first ones.
    pub fn extends(&self, older: &Schema) -> bool {
        older.columns.len() <= self.columns.len()
            && older
                .columns
                .iter()
                .zip(&self.columns)
                .all(|(o, n): (&Column, &Column)| {
                    o.name == n.name && o.data_type == n.data_type && o.id == n.id
                })
    }
}

/// A batch of an older schema's columns (all of them, in order) widened to `target` (the
/// current schema's Arrow form, or a later one): the added columns are all-null.
pub fn widen_batch(batch: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    let have = batch.num_columns();
    if have > target.fields().len() {
        return Err(Error::internal(format!(
            "widening a batch of {have} columns to a schema of {}",
            target.fields().len()
        )));
    }
    if have == target.fields().len() {
        return Ok(batch.clone());
    }
    let n = batch.num_rows();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    for f in target.fields().iter().skip(have) {
        columns.push(new_null_array(f.data_type(), n));
    }
    let options = RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(target),
        columns,
        &options,
    )?)
}

/// A row of an older schema widened to `width` columns (the added ones null).
pub fn widen_row(mut row: Vec<Datum>, width: usize) -> Vec<Datum> {
    while row.len() < width {
        row.push(Datum::Null);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_columns_rules() {
        let s = Schema::builder()
            .column("k", DataType::int().not_null())
            .column("v", DataType::string())
            .primary_key(["k"])
            .build()
            .unwrap();
        let s2 = s
            .with_added_columns(&[AddColumn::new("n", DataType::bigint())])
            .unwrap();
        assert_eq!(s2.column_names(), ["k", "v", "n"]);
        assert_eq!(s2.columns[2].id, s.highest_field_id + 1);
        assert_eq!(s2.primary_key, s.primary_key);
        assert!(s2.extends(&s) && !s.extends(&s2));
        let e = s
            .with_added_columns(&[AddColumn::new("v", DataType::bigint())])
            .unwrap_err();
        assert!(e.message().contains("'v'"), "{e}");
        let e = s
            .with_added_columns(&[AddColumn::new("m", DataType::bigint().not_null())])
            .unwrap_err();
        assert!(e.message().contains("nullable"), "{e}");
        assert!(s.with_added_columns(&[]).is_err());
    }
}
