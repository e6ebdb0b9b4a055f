//! Table schemas: columns with ids, primary key, Fluss's schema JSON and the Arrow mapping.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{
    DataType as ArrowType, Field, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit,
};
use serde_json::{Map, Value};

use super::datatype::{DataField, DataType, TypeKind};
use crate::error::{Error, Result};

/// Column id meaning "not assigned yet".
pub const UNKNOWN_COLUMN_ID: i32 = -1;

/// An aggregation function attached to a column of an aggregation merge-engine table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggFunction {
    /// Fluss's lower-case function name, e.g. `sum`, `listagg`.
    pub function: String,
    /// Parameters in order, e.g. `("delimiter", ";")`.
    pub parameters: Vec<(String, String)>,
}

impl AggFunction {
    /// A function without parameters, e.g. `AggFunction::new("sum")`.
    pub fn new(function: impl Into<String>) -> AggFunction {
        AggFunction {
            function: function.into(),
            parameters: Vec::new(),
        }
    }

    /// The same function with a parameter, e.g. `("delimiter", ";")` for `listagg`.
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.parameters.push((name.into(), value.into()));
        self
    }
}

/// One table column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Column type.
    pub data_type: DataType,
    /// Optional comment.
    pub comment: Option<String>,
    /// Column id ([`UNKNOWN_COLUMN_ID`] when unassigned).
    pub id: i32,
    /// Aggregation function (aggregation merge engine only).
    pub agg_function: Option<AggFunction>,
}

impl Column {
    /// A column without comment and with an unassigned id.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Column {
            name: name.into(),
            data_type,
            comment: None,
            id: UNKNOWN_COLUMN_ID,
            agg_function: None,
        }
    }

    /// The same column with a comment.
    pub fn with_comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// The same column with an id.
    pub fn with_id(mut self, id: i32) -> Self {
        self.id = id;
        self
    }

    /// Fluss's ColumnJsonSerde form.
    pub fn to_json_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from(self.name.clone()));
        m.insert("data_type".into(), self.data_type.to_json_value());
        if let Some(c) = &self.comment {
            m.insert("comment".into(), Value::from(c.clone()));
        }
        if let Some(agg) = &self.agg_function {
            let mut a = Map::new();
            a.insert("type".into(), Value::from(agg.function.clone()));
            if !agg.parameters.is_empty() {
                let mut p = Map::new();
                for (k, v) in &agg.parameters {
                    p.insert(k.clone(), Value::from(v.clone()));
                }
                a.insert("parameters".into(), Value::Object(p));
            }
            m.insert("agg_function".into(), Value::Object(a));
        }
        m.insert("id".into(), Value::from(self.id));
        Value::Object(m)
    }

    /// Parses Fluss's ColumnJsonSerde form.
    pub fn from_json_value(v: &Value) -> Result<Column> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("column JSON needs a string 'name'"))?;
        let dt = v
            .get("data_type")
            .ok_or_else(|| Error::invalid(format!("column {name} has no 'data_type'")))?;
        let data_type =
            DataType::from_json_value(dt).map_err(|e| e.context(format!("column {name}")))?;
        let comment = v.get("comment").and_then(Value::as_str).map(str::to_string);
        let id = v
            .get("id")
            .and_then(Value::as_i64)
            .map(|n| n as i32)
            .unwrap_or(UNKNOWN_COLUMN_ID);
        let agg_function = match v.get("agg_function") {
            Some(Value::Object(a)) => {
                let function = a
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let parameters = match a.get("parameters") {
                    Some(Value::Object(p)) => p
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| v.to_string()),
                            )
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                Some(AggFunction {
                    function,
                    parameters,
                })
            }
            _ => None,
        };
        Ok(Column {
            name: name.to_string(),
            data_type,
            comment,
            id,
            agg_function,
        })
    }
}

/// A table schema: ordered columns, optional primary key, and the highest field id handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    /// Columns in order.
    pub columns: Vec<Column>,
    /// Primary-key column names, in key order.
    pub primary_key: Option<Vec<String>>,
    /// Auto-increment column names (primary-key tables only).
    pub auto_increment_columns: Vec<String>,
    /// The highest column / nested field id assigned so far.
    pub highest_field_id: i32,
}

/// Builds a [`Schema`], assigning column ids like Fluss's `Schema.Builder`.
#[derive(Debug, Default)]
pub struct SchemaBuilder {
    columns: Vec<Column>,
    primary_key: Option<Vec<String>>,
    auto_increment: Vec<String>,
    highest_field_id: i32,
    error: Option<Error>,
}

fn reassign_field_ids(t: DataType, next: &mut i32) -> DataType {
    let nullable = t.nullable;
    let kind = match t.kind {
        TypeKind::Array(e) => TypeKind::Array(Box::new(reassign_field_ids(*e, next))),
        TypeKind::Map(k, v) => TypeKind::Map(
            Box::new(reassign_field_ids(*k, next)),
            Box::new(reassign_field_ids(*v, next)),
        ),
        TypeKind::Row(fields) => TypeKind::Row(
            fields
                .into_iter()
                .map(|f| {
                    *next += 1;
                    let id = *next;
                    DataField {
                        name: f.name,
                        data_type: reassign_field_ids(f.data_type, next),
                        description: f.description,
                        field_id: id,
                    }
                })
                .collect(),
        ),
        other => other,
    };
    DataType { kind, nullable }
}

fn collect_field_ids(t: &DataType, out: &mut Vec<i32>) {
    match &t.kind {
        TypeKind::Array(e) => collect_field_ids(e, out),
        TypeKind::Map(k, v) => {
            collect_field_ids(k, out);
            collect_field_ids(v, out);
        }
        TypeKind::Row(fields) => {
            for f in fields {
                out.push(f.field_id);
                collect_field_ids(&f.data_type, out);
            }
        }
        _ => {}
    }
}

impl SchemaBuilder {
    /// Appends a column; it gets the next id and its nested ROW fields the ids after it.
    pub fn column(mut self, name: impl Into<String>, data_type: DataType) -> Self {
        self.highest_field_id += 1;
        let id = self.highest_field_id;
        let data_type = reassign_field_ids(data_type, &mut self.highest_field_id);
        self.columns.push(Column::new(name, data_type).with_id(id));
        self
    }

    /// Sets the comment of the last column added.
    pub fn with_comment(mut self, comment: impl Into<String>) -> Self {
        match self.columns.last_mut() {
            Some(c) => c.comment = Some(comment.into()),
            None => {
                self.error.get_or_insert(Error::invalid(
                    "with_comment(...) must be called after a column definition",
                ));
            }
        }
        self
    }

    /// Sets the aggregate function of the last column added (for a table with the aggregation
    /// merge engine), e.g. `AggFunction::new("sum")`.
    pub fn with_agg_function(mut self, function: AggFunction) -> Self {
        match self.columns.last_mut() {
            Some(c) => c.agg_function = Some(function),
            None => {
                self.error.get_or_insert(Error::invalid(
                    "with_agg_function(...) must be called after a column definition",
                ));
            }
        }
        self
    }

    /// Adds existing columns: ids are kept when all have one, else assigned in order.
    pub fn from_columns(mut self, columns: Vec<Column>) -> Self {
        let all_set = columns.iter().all(|c| c.id != UNKNOWN_COLUMN_ID);
        let none_set = columns.iter().all(|c| c.id == UNKNOWN_COLUMN_ID);
        if !(all_set || none_set) {
            self.error.get_or_insert(Error::invalid(
                "All columns must have columnId or none of them must have columnId.",
            ));
            return self;
        }
        if all_set && !columns.is_empty() {
            if !self.columns.is_empty() {
                self.error.get_or_insert(Error::invalid(
                    "from_columns with column ids must be the first call on the schema builder",
                ));
                return self;
            }
            let mut ids = Vec::new();
            for c in &columns {
                ids.push(c.id);
                collect_field_ids(&c.data_type, &mut ids);
            }
            self.highest_field_id = ids.into_iter().max().unwrap_or(-1);
            self.columns.extend(columns);
        } else {
            for mut c in columns {
                self.highest_field_id += 1;
                c.id = self.highest_field_id;
                self.columns.push(c);
            }
        }
        self
    }

    /// Sets the primary key (its columns become NOT NULL).
    pub fn primary_key<I, S>(mut self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.primary_key = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Marks a column as auto-increment.
    pub fn auto_increment(mut self, column: impl Into<String>) -> Self {
        self.auto_increment.push(column.into());
        self
    }

    /// Overrides the highest field id (as read from stored JSON).
    pub fn highest_field_id(mut self, id: i32) -> Self {
        self.highest_field_id = id;
        self
    }

    /// Validates and builds the schema.
    pub fn build(self) -> Result<Schema> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut columns = self.columns;
        let mut seen = HashSet::new();
        for c in &columns {
            c.data_type
                .validate()
                .map_err(|e| e.context(format!("column {}", c.name)))?;
            if !seen.insert(c.name.as_str()) {
                return Err(Error::invalid(format!(
                    "Table column {:?} must not contain duplicate fields. Found: [{}]",
                    columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
                    c.name
                )));
            }
        }
        if let Some(pk) = &self.primary_key {
            if pk.is_empty() {
                return Err(Error::invalid("Primary key must not be empty"));
            }
            let mut pk_seen = HashSet::new();
            for k in pk {
                if !pk_seen.insert(k.as_str()) {
                    return Err(Error::invalid(format!(
                        "Primary key constraint {pk:?} must not contain duplicate columns. Found: [{k}]"
                    )));
                }
                let col = columns.iter_mut().find(|c| &c.name == k).ok_or_else(|| {
                    Error::invalid(format!(
                        "Primary key column '{k}' is not a column of the table"
                    ))
                })?;
                col.data_type.nullable = false;
            }
        } else if !self.auto_increment.is_empty() {
            return Err(Error::invalid(
                "Auto increment column can only be used in primary-key table.",
            ));
        }
        if self.auto_increment.len() > 1 {
            return Err(Error::invalid(
                "Multiple auto increment columns are not supported yet.",
            ));
        }
        let pk = self.primary_key.as_deref().unwrap_or_default();
        for a in &self.auto_increment {
            let Some(col) = columns.iter().find(|c| &c.name == a) else {
                return Err(Error::invalid(format!(
                    "Auto increment column {a} does not exist in table columns"
                )));
            };
            if pk.contains(a) {
                return Err(Error::invalid(
                    "Auto increment column can not be used as the primary key.",
                ));
            }
            if !matches!(col.data_type.kind, TypeKind::Int | TypeKind::BigInt) {
                return Err(Error::invalid(
                    "The data type of auto increment column must be INT or BIGINT.",
                ));
            }
        }
        for c in &columns {
            if c.agg_function.is_some() && pk.contains(&c.name) {
                return Err(Error::invalid(format!(
                    "Cannot set aggregation function for primary key column '{}'. Primary key \
                     columns automatically use 'primary-key' aggregation.",
                    c.name
                )));
            }
        }
        Ok(Schema {
            columns,
            primary_key: self.primary_key,
            auto_increment_columns: self.auto_increment,
            highest_field_id: self.highest_field_id,
        })
    }
}

impl Schema {
    /// A new builder (ids start at 0).
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder {
            highest_field_id: -1,
            ..Default::default()
        }
    }

    /// Index of the column called `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Column names in order.
    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Column types in order.
    pub fn data_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.data_type.clone()).collect()
    }

    /// The schema as one ROW type (field ids = column ids).
    pub fn row_type(&self) -> DataType {
        DataType::row(
            self.columns
                .iter()
                .map(|c| DataField::new(c.name.clone(), c.data_type.clone()).with_id(c.id))
                .collect(),
        )
    }

    /// Whether a primary key is declared.
    pub fn has_primary_key(&self) -> bool {
        self.primary_key.is_some()
    }

    /// Column indexes of the primary key, in key order (empty without a primary key).
    pub fn primary_key_indexes(&self) -> Vec<usize> {
        self.primary_key
            .iter()
            .flatten()
            .filter_map(|k| self.column_index(k))
            .collect()
    }

    /// Indexes of the named columns; errors naming the first unknown one.
    pub fn indexes_of(&self, names: &[String]) -> Result<Vec<usize>> {
        names
            .iter()
            .map(|n| {
                self.column_index(n).ok_or_else(|| {
                    Error::invalid(format!("column '{n}' does not exist in the schema"))
                })
            })
            .collect()
    }

    /// Fluss's SchemaJsonSerde form.
    pub fn to_json_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("version".into(), Value::from(1));
        m.insert(
            "columns".into(),
            Value::Array(self.columns.iter().map(Column::to_json_value).collect()),
        );
        if let Some(pk) = &self.primary_key {
            m.insert(
                "primary_key".into(),
                Value::Array(pk.iter().map(|s| Value::from(s.clone())).collect()),
            );
        }
        if !self.auto_increment_columns.is_empty() {
            m.insert(
                "auto_increment_column".into(),
                Value::Array(
                    self.auto_increment_columns
                        .iter()
                        .map(|s| Value::from(s.clone()))
                        .collect(),
                ),
            );
        }
        m.insert(
            "highest_field_id".into(),
            Value::from(self.highest_field_id),
        );
        Value::Object(m)
    }

    /// Parses Fluss's SchemaJsonSerde form (older JSON without column ids is accepted).
    pub fn from_json_value(v: &Value) -> Result<Schema> {
        let cols = v
            .get("columns")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::invalid("schema JSON needs an array 'columns'"))?;
        let columns = cols
            .iter()
            .map(Column::from_json_value)
            .collect::<Result<Vec<_>>>()?;
        let mut b = Schema::builder().from_columns(columns);
        if let Some(pk) = v.get("primary_key").and_then(Value::as_array) {
            b = b.primary_key(pk.iter().filter_map(Value::as_str).map(str::to_string));
        }
        if let Some(ai) = v.get("auto_increment_column").and_then(Value::as_array) {
            for a in ai.iter().filter_map(Value::as_str) {
                b = b.auto_increment(a);
            }
        }
        if let Some(h) = v.get("highest_field_id").and_then(Value::as_i64) {
            b = b.highest_field_id(h as i32);
        }
        b.build()
    }

    /// Serialises to Fluss's schema JSON bytes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_json_value()).unwrap_or_default()
    }

    /// Parses Fluss's schema JSON bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Schema> {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("schema JSON does not parse: {e}")))?;
        Schema::from_json_value(&v)
    }

    /// The Arrow schema Fluss uses for this table's log batches (fluss ArrowUtils.toArrowSchema).
    pub fn to_arrow(&self) -> SchemaRef {
        Arc::new(ArrowSchema::new(
            self.columns
                .iter()
                .map(|c| to_arrow_field(&c.name, &c.data_type))
                .collect::<Vec<_>>(),
        ))
    }

    /// The Arrow schema that describes the table to a user (what bindings show as a table's
    /// schema): [`Schema::to_arrow`], except that a top-level TIMESTAMP_LTZ column is a timestamp
    /// with the zone `UTC`, Arrow's form of an instant, so that it can be told from TIMESTAMP
    /// and maps back to TIMESTAMP_LTZ ([`from_arrow_field`]). Reads still return Fluss's
    /// zone-less log form (same unit, same epoch values); writes take either. Nested fields keep
    /// the log form, because writes conform nested types exactly.
    pub fn to_arrow_described(&self) -> SchemaRef {
        Arc::new(ArrowSchema::new(
            self.columns
                .iter()
                .map(|c| {
                    let f = to_arrow_field(&c.name, &c.data_type);
                    match (&c.data_type.kind, f.data_type()) {
                        (TypeKind::TimestampLtz { .. }, ArrowType::Timestamp(unit, None)) => {
                            let zoned = ArrowType::Timestamp(*unit, Some(LTZ_ZONE.into()));
                            f.with_data_type(zoned)
                        }
                        _ => f,
                    }
                })
                .collect::<Vec<_>>(),
        ))
    }

    /// A schema from an Arrow schema (ids assigned in order; no primary key).
    pub fn from_arrow(schema: &ArrowSchema) -> Result<Schema> {
        Schema::builder_from_arrow(schema)?.build()
    }

    /// A schema builder holding the columns of an Arrow schema, in order (an unsupported type
    /// is an error naming its column).
    pub fn builder_from_arrow(schema: &ArrowSchema) -> Result<SchemaBuilder> {
        let mut b = Schema::builder();
        for f in schema.fields() {
            let t = from_arrow_field(f).map_err(|e| e.context(format!("column '{}'", f.name())))?;
            b = b.column(f.name().clone(), t);
        }
        Ok(b)
    }
}

/// The zone [`Schema::to_arrow_described`] gives TIMESTAMP_LTZ columns.
pub const LTZ_ZONE: &str = "UTC";

/// Fluss's Arrow type for `t` (fluss ArrowUtils.DataTypeToArrowTypeConverter).
///
/// TIME and TIMESTAMP pick the unit from the precision: 0 seconds, 1-3 millis, 4-6 micros,
/// 7-9 nanos; TIME uses 32 bits for seconds/millis and 64 for micros/nanos. TIMESTAMP_LTZ maps
/// to a timestamp WITHOUT time zone, exactly as the Java client does.
pub fn to_arrow_type(t: &DataType) -> ArrowType {
    fn unit(p: u32) -> TimeUnit {
        match p {
            0 => TimeUnit::Second,
            1..=3 => TimeUnit::Millisecond,
            4..=6 => TimeUnit::Microsecond,
            _ => TimeUnit::Nanosecond,
        }
    }
    match &t.kind {
        TypeKind::Boolean => ArrowType::Boolean,
        TypeKind::TinyInt => ArrowType::Int8,
        TypeKind::SmallInt => ArrowType::Int16,
        TypeKind::Int => ArrowType::Int32,
        TypeKind::BigInt => ArrowType::Int64,
        TypeKind::Float => ArrowType::Float32,
        TypeKind::Double => ArrowType::Float64,
        TypeKind::Char { .. } | TypeKind::String => ArrowType::Utf8,
        TypeKind::Binary { length } => ArrowType::FixedSizeBinary(*length as i32),
        TypeKind::Bytes => ArrowType::Binary,
        TypeKind::Decimal { precision, scale } => {
            ArrowType::Decimal128(*precision as u8, *scale as i8)
        }
        TypeKind::Date => ArrowType::Date32,
        TypeKind::Time { precision } => match unit(*precision) {
            u @ (TimeUnit::Second | TimeUnit::Millisecond) => ArrowType::Time32(u),
            u => ArrowType::Time64(u),
        },
        TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } => {
            ArrowType::Timestamp(unit(*precision), None)
        }
        TypeKind::Array(e) => ArrowType::List(Arc::new(to_arrow_field("element", e))),
        TypeKind::Map(k, v) => {
            let entries = Field::new(
                "entries",
                ArrowType::Struct(Fields::from(vec![
                    to_arrow_field("key", k),
                    to_arrow_field("value", v),
                ])),
                false,
            );
            ArrowType::Map(Arc::new(entries), false)
        }
        TypeKind::Row(fields) => ArrowType::Struct(Fields::from(
            fields
                .iter()
                .map(|f| to_arrow_field(&f.name, &f.data_type))
                .collect::<Vec<_>>(),
        )),
    }
}

/// An Arrow field named `name` of Fluss type `t`, nullable as `t` is.
pub fn to_arrow_field(name: &str, t: &DataType) -> Field {
    Field::new(name, to_arrow_type(t), t.nullable)
}

/// The Fluss type of an Arrow field (nullability from the field).
pub fn from_arrow_field(f: &Field) -> Result<DataType> {
    Ok(from_arrow_type(f.data_type())
        .map_err(|e| e.context(format!("field {}", f.name())))?
        .with_nullable(f.is_nullable()))
}

/// The Fluss type of an Arrow type (nullable). Utf8/LargeUtf8 -> STRING, Binary/LargeBinary ->
/// BYTES, a zoned timestamp -> TIMESTAMP_LTZ; unsupported Arrow types are errors.
pub fn from_arrow_type(t: &ArrowType) -> Result<DataType> {
    fn precision(u: &TimeUnit) -> u32 {
        match u {
            TimeUnit::Second => 0,
            TimeUnit::Millisecond => 3,
            TimeUnit::Microsecond => 6,
            TimeUnit::Nanosecond => 9,
        }
    }
    Ok(match t {
        ArrowType::Boolean => DataType::boolean(),
        ArrowType::Int8 => DataType::tinyint(),
        ArrowType::Int16 => DataType::smallint(),
        ArrowType::Int32 => DataType::int(),
        ArrowType::Int64 => DataType::bigint(),
        ArrowType::Float32 => DataType::float(),
        ArrowType::Float64 => DataType::double(),
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => DataType::string(),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => DataType::bytes(),
        ArrowType::FixedSizeBinary(n) if *n > 0 => DataType::binary(*n as u32),
        ArrowType::Decimal128(p, s) if *s >= 0 => DataType::decimal(*p as u32, *s as u32),
        ArrowType::Date32 => DataType::date(),
        ArrowType::Time32(u) | ArrowType::Time64(u) => DataType::time(precision(u)),
        ArrowType::Timestamp(u, None) => DataType::timestamp(precision(u)),
        ArrowType::Timestamp(u, Some(_)) => DataType::timestamp_ltz(precision(u)),
        ArrowType::List(f) | ArrowType::LargeList(f) => DataType::array(from_arrow_field(f)?),
        ArrowType::Map(entries, _) => match entries.data_type() {
            ArrowType::Struct(kv) if kv.len() == 2 => {
                DataType::map(from_arrow_field(&kv[0])?, from_arrow_field(&kv[1])?)
            }
            other => {
                return Err(Error::unsupported(format!(
                    "Arrow map entries must be a struct of key and value, got {other}"
                )))
            }
        },
        ArrowType::Struct(fields) => DataType::row(
            fields
                .iter()
                .map(|f| Ok(DataField::new(f.name().clone(), from_arrow_field(f)?)))
                .collect::<Result<Vec<_>>>()?,
        ),
        other => {
            return Err(Error::unsupported(format!(
                "Arrow type {other} has no Fluss equivalent"
            )))
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    // Golden values from fluss-common/src/test/java/org/apache/fluss/utils/json/SchemaJsonSerdeTest.java.
    pub(crate) const SCHEMA_JSON_0: &str = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER","nullable":false},"comment":"a is first column","id":0},{"name":"b","data_type":{"type":"STRING"},"comment":"b is second column","id":1},{"name":"c","data_type":{"type":"CHAR","nullable":false,"length":10},"comment":"c is third column","id":2}],"primary_key":["a","c"],"highest_field_id":2}"#;
    pub(crate) const SCHEMA_JSON_1: &str = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER","nullable":false},"id":0},{"name":"b","data_type":{"type":"STRING"},"comment":"b is second column","id":1},{"name":"c","data_type":{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":6},"comment":"c is third column","id":2}],"primary_key":["a"],"highest_field_id":2}"#;
    const SCHEMA_JSON_3: &str = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"BIGINT"},"comment":"a is first column","id":0},{"name":"b","data_type":{"type":"STRING"},"comment":"b is second column","id":1},{"name":"c","data_type":{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":6},"comment":"c is third column","id":2}],"highest_field_id":2}"#;
    const SCHEMA_JSON_4: &str = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER","nullable":false},"comment":"a is first column","id":0},{"name":"b","data_type":{"type":"INTEGER"},"comment":"b is second column","id":1},{"name":"c","data_type":{"type":"CHAR","nullable":false,"length":10},"comment":"c is third column","id":2}],"primary_key":["a","c"],"auto_increment_column":["b"],"highest_field_id":2}"#;
    const SCHEMA_JSON_5: &str = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER"},"comment":"a is first column","id":0},{"name":"b","data_type":{"type":"ROW","fields":[{"name":"c","field_type":{"type":"INTEGER"},"description":"a is first column","field_id":2},{"name":"d","field_type":{"type":"INTEGER"},"description":"a is first column","field_id":3}]},"comment":"b is second column","id":1}],"highest_field_id":3}"#;
    const SCHEMA_JSON_WITH_AGG: &str = r#"{"version":1,"columns":[{"name":"product_id","data_type":{"type":"BIGINT","nullable":false},"id":0},{"name":"total_sales","data_type":{"type":"BIGINT"},"agg_function":{"type":"sum"},"id":1},{"name":"max_price","data_type":{"type":"DECIMAL","precision":10,"scale":2},"agg_function":{"type":"max"},"id":2},{"name":"last_update_time","data_type":{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":6},"agg_function":{"type":"last_value_ignore_nulls"},"id":3},{"name":"tags","data_type":{"type":"STRING"},"agg_function":{"type":"listagg","parameters":{"delimiter":";"}},"id":4},{"name":"categories","data_type":{"type":"STRING"},"agg_function":{"type":"string_agg","parameters":{"delimiter":"|"}},"id":5},{"name":"labels","data_type":{"type":"STRING"},"agg_function":{"type":"listagg"},"id":6}],"primary_key":["product_id"],"highest_field_id":6}"#;

    pub(crate) fn schema_0() -> Schema {
        Schema::builder()
            .column("a", DataType::int())
            .with_comment("a is first column")
            .column("b", DataType::string())
            .with_comment("b is second column")
            .column("c", DataType::char(10))
            .with_comment("c is third column")
            .primary_key(["a", "c"])
            .build()
            .unwrap()
    }

    pub(crate) fn schema_1() -> Schema {
        Schema::builder()
            .from_columns(vec![
                Column::new("a", DataType::int()),
                Column::new("b", DataType::string()).with_comment("b is second column"),
                Column::new("c", DataType::timestamp(6)).with_comment("c is third column"),
            ])
            .primary_key(["a"])
            .build()
            .unwrap()
    }

    #[test]
    fn schema_json_golden() {
        let s3 = Schema::builder()
            .column("a", DataType::bigint())
            .with_comment("a is first column")
            .column("b", DataType::string())
            .with_comment("b is second column")
            .column("c", DataType::timestamp(6))
            .with_comment("c is third column")
            .build()
            .unwrap();
        let s4 = Schema::builder()
            .column("a", DataType::int())
            .with_comment("a is first column")
            .column("b", DataType::int())
            .with_comment("b is second column")
            .column("c", DataType::char(10))
            .with_comment("c is third column")
            .primary_key(["a", "c"])
            .auto_increment("b")
            .build()
            .unwrap();
        let s5 = Schema::builder()
            .column("a", DataType::int())
            .with_comment("a is first column")
            .column(
                "b",
                DataType::row(vec![
                    DataField::new("c", DataType::int())
                        .with_description("a is first column")
                        .with_id(0),
                    DataField::new("d", DataType::int())
                        .with_description("a is first column")
                        .with_id(1),
                ]),
            )
            .with_comment("b is second column")
            .build()
            .unwrap();
        for (s, json) in [
            (schema_0(), SCHEMA_JSON_0),
            (schema_1(), SCHEMA_JSON_1),
            (s3, SCHEMA_JSON_3),
            (s4, SCHEMA_JSON_4),
            (s5, SCHEMA_JSON_5),
        ] {
            assert_eq!(String::from_utf8(s.to_json()).unwrap(), json);
            assert_eq!(Schema::from_json(json.as_bytes()).unwrap(), s);
        }
        let agg = Schema::from_json(SCHEMA_JSON_WITH_AGG.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(agg.to_json()).unwrap(),
            SCHEMA_JSON_WITH_AGG
        );
    }

    #[test]
    fn schema_json_without_column_ids() {
        // oldSchemaJson1 of SchemaJsonSerdeTest.jsonLackOfColumnId.
        let old = r#"{"version":1,"columns":[{"name":"a","data_type":{"type":"INTEGER","nullable":false},"comment":"a is first column"},{"name":"b","data_type":{"type":"STRING"},"comment":"b is second column"},{"name":"c","data_type":{"type":"CHAR","nullable":false,"length":10},"comment":"c is third column"}],"primary_key":["a","c"]}"#;
        assert_eq!(Schema::from_json(old.as_bytes()).unwrap(), schema_0());
    }

    #[test]
    fn builder_rules() {
        assert!(Schema::builder()
            .column("a", DataType::int())
            .column("a", DataType::int())
            .build()
            .is_err());
        assert!(Schema::builder()
            .column("a", DataType::int())
            .primary_key(["x"])
            .build()
            .is_err());
        let s = schema_0();
        assert_eq!(s.primary_key_indexes(), vec![0, 2]);
        assert_eq!(s.column_index("b"), Some(1));
        assert!(!s.columns[0].data_type.nullable);
    }

    #[test]
    fn arrow_mapping_every_type() {
        use ArrowType as A;
        let cases: Vec<(DataType, ArrowType)> = vec![
            (DataType::boolean(), A::Boolean),
            (DataType::tinyint(), A::Int8),
            (DataType::smallint(), A::Int16),
            (DataType::int(), A::Int32),
            (DataType::bigint(), A::Int64),
            (DataType::float(), A::Float32),
            (DataType::double(), A::Float64),
            (DataType::decimal(10, 2), A::Decimal128(10, 2)),
            (DataType::decimal(38, 0), A::Decimal128(38, 0)),
            (DataType::char(3), A::Utf8),
            (DataType::string(), A::Utf8),
            (DataType::binary(16), A::FixedSizeBinary(16)),
            (DataType::bytes(), A::Binary),
            (DataType::date(), A::Date32),
            (DataType::time(0), A::Time32(TimeUnit::Second)),
            (DataType::time(3), A::Time32(TimeUnit::Millisecond)),
            (DataType::time(6), A::Time64(TimeUnit::Microsecond)),
            (DataType::time(9), A::Time64(TimeUnit::Nanosecond)),
            (DataType::timestamp(0), A::Timestamp(TimeUnit::Second, None)),
            (
                DataType::timestamp(3),
                A::Timestamp(TimeUnit::Millisecond, None),
            ),
            (
                DataType::timestamp(6),
                A::Timestamp(TimeUnit::Microsecond, None),
            ),
            (
                DataType::timestamp(9),
                A::Timestamp(TimeUnit::Nanosecond, None),
            ),
            (
                DataType::timestamp_ltz(3),
                A::Timestamp(TimeUnit::Millisecond, None),
            ),
            (
                DataType::timestamp_ltz(6),
                A::Timestamp(TimeUnit::Microsecond, None),
            ),
            (
                DataType::array(DataType::int().not_null()),
                A::List(Arc::new(Field::new("element", A::Int32, false))),
            ),
            (
                DataType::map(DataType::string(), DataType::int()),
                A::Map(
                    Arc::new(Field::new(
                        "entries",
                        A::Struct(Fields::from(vec![
                            Field::new("key", A::Utf8, false),
                            Field::new("value", A::Int32, true),
                        ])),
                        false,
                    )),
                    false,
                ),
            ),
            (
                DataType::row(vec![
                    DataField::new("x", DataType::int()),
                    DataField::new("y", DataType::string().not_null()),
                ]),
                A::Struct(Fields::from(vec![
                    Field::new("x", A::Int32, true),
                    Field::new("y", A::Utf8, false),
                ])),
            ),
        ];
        for (t, expected) in cases {
            assert_eq!(to_arrow_type(&t), expected, "{t}");
            assert!(!to_arrow_field("f", &t.clone().not_null()).is_nullable());
            // Back again: identical except for precisions that Arrow cannot carry and LTZ.
            let back = from_arrow_type(&expected).unwrap();
            if !matches!(
                t.kind,
                TypeKind::Char { .. } | TypeKind::TimestampLtz { .. }
            ) {
                assert_eq!(
                    back.to_string().replace(" NOT NULL", ""),
                    t.to_string().replace(" NOT NULL", ""),
                );
            }
        }
        assert_eq!(
            from_arrow_type(&A::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))).unwrap(),
            DataType::timestamp_ltz(6)
        );
        assert_eq!(from_arrow_type(&A::LargeUtf8).unwrap(), DataType::string());
        assert!(from_arrow_type(&A::UInt32).is_err());
    }

    #[test]
    fn schema_to_and_from_arrow() {
        let s = schema_1();
        let a = s.to_arrow();
        assert_eq!(a.field(0).name(), "a");
        assert!(!a.field(0).is_nullable());
        assert_eq!(
            a.field(2).data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, None)
        );
        let back = Schema::from_arrow(&a).unwrap();
        assert_eq!(back.data_types(), s.data_types());
        assert_eq!(back.column_names(), s.column_names());
    }

    #[test]
    fn described_schema_marks_ltz_columns_as_instants() {
        let s = Schema::builder()
            .column("ntz", DataType::timestamp(6))
            .column("ltz3", DataType::timestamp_ltz(3))
            .column("ltz9", DataType::timestamp_ltz(9).not_null())
            .column(
                "row",
                DataType::row(vec![DataField::new("t", DataType::timestamp_ltz(6))]),
            )
            .build()
            .unwrap();
        let d = s.to_arrow_described();
        let log = s.to_arrow();
        let zoned = |u| ArrowType::Timestamp(u, Some(LTZ_ZONE.into()));
        assert_eq!(
            d.field(0).data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(d.field(1).data_type(), &zoned(TimeUnit::Millisecond));
        assert_eq!(d.field(2).data_type(), &zoned(TimeUnit::Nanosecond));
        assert!(!d.field(2).is_nullable());
        // Nested fields and every non-LTZ column are exactly the log form.
        assert_eq!(d.field(3), log.field(3));
        assert_eq!(d.field(0), log.field(0));
        // Described LTZ columns map back to TIMESTAMP_LTZ; the log form cannot tell them apart.
        let back = Schema::from_arrow(&d).unwrap();
        assert_eq!(back.data_types()[1], DataType::timestamp_ltz(3));
        assert_eq!(back.data_types()[2], DataType::timestamp_ltz(9).not_null());
        assert_eq!(
            Schema::from_arrow(&log).unwrap().data_types()[1],
            DataType::timestamp(3)
        );
    }
}
