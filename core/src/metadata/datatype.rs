//! Fluss data types: the type tree, nullability, SQL text and the JSON form of Fluss's schema JSON.

use std::fmt;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Largest DECIMAL precision Fluss accepts.
pub const MAX_DECIMAL_PRECISION: u32 = 38;
/// DECIMAL precisions up to this value store the unscaled value as one `i64` ("compact").
pub const MAX_COMPACT_DECIMAL_PRECISION: u32 = 18;
/// TIMESTAMP / TIMESTAMP_LTZ precisions up to this value store only epoch millis ("compact").
pub const MAX_COMPACT_TIMESTAMP_PRECISION: u32 = 3;
/// Largest fractional-second precision of TIME / TIMESTAMP / TIMESTAMP_LTZ.
pub const MAX_TIME_PRECISION: u32 = 9;

/// A Fluss data type: what values look like plus whether null is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataType {
    /// The type without its nullability.
    pub kind: TypeKind,
    /// Whether the value may be null (Fluss's default is nullable).
    pub nullable: bool,
}

/// The shape of a [`DataType`], one variant per Fluss type root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// BOOLEAN.
    Boolean,
    /// TINYINT (i8).
    TinyInt,
    /// SMALLINT (i16).
    SmallInt,
    /// INT (i32); JSON name `INTEGER`.
    Int,
    /// BIGINT (i64).
    BigInt,
    /// FLOAT (f32).
    Float,
    /// DOUBLE (f64).
    Double,
    /// DECIMAL(precision, scale).
    Decimal {
        /// Total digits, 1..=38.
        precision: u32,
        /// Digits right of the point, 0..=precision.
        scale: u32,
    },
    /// CHAR(length): fixed-length string.
    Char {
        /// Length in characters, >= 1.
        length: u32,
    },
    /// STRING: variable-length UTF-8.
    String,
    /// BINARY(length): fixed-length bytes.
    Binary {
        /// Length in bytes, >= 1.
        length: u32,
    },
    /// BYTES: variable-length bytes.
    Bytes,
    /// DATE: days since 1970-01-01.
    Date,
    /// TIME(p): milliseconds of the day.
    Time {
        /// Fractional-second digits, 0..=9.
        precision: u32,
    },
    /// TIMESTAMP(p) without time zone.
    Timestamp {
        /// Fractional-second digits, 0..=9.
        precision: u32,
    },
    /// TIMESTAMP_LTZ(p): an instant (TIMESTAMP WITH LOCAL TIME ZONE).
    TimestampLtz {
        /// Fractional-second digits, 0..=9.
        precision: u32,
    },
    /// `ARRAY<element>`.
    Array(Box<DataType>),
    /// MAP<key, value>; the key is always NOT NULL.
    Map(Box<DataType>, Box<DataType>),
    /// ROW<fields...>.
    Row(Vec<DataField>),
}

/// One field of a ROW type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataField {
    /// Field name.
    pub name: String,
    /// Field type.
    pub data_type: DataType,
    /// Optional description.
    pub description: Option<String>,
    /// Field id (-1 when unassigned).
    pub field_id: i32,
}

impl DataField {
    /// A field without description and with an unassigned id (-1).
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        DataField {
            name: name.into(),
            data_type,
            description: None,
            field_id: -1,
        }
    }

    /// The same field with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same field with an id.
    pub fn with_id(mut self, id: i32) -> Self {
        self.field_id = id;
        self
    }
}

fn nullable(kind: TypeKind) -> DataType {
    DataType {
        kind,
        nullable: true,
    }
}

impl DataType {
    /// A nullable type of `kind`.
    pub fn new(kind: TypeKind) -> Self {
        nullable(kind)
    }
    /// BOOLEAN.
    pub fn boolean() -> Self {
        nullable(TypeKind::Boolean)
    }
    /// TINYINT.
    pub fn tinyint() -> Self {
        nullable(TypeKind::TinyInt)
    }
    /// SMALLINT.
    pub fn smallint() -> Self {
        nullable(TypeKind::SmallInt)
    }
    /// INT.
    pub fn int() -> Self {
        nullable(TypeKind::Int)
    }
    /// BIGINT.
    pub fn bigint() -> Self {
        nullable(TypeKind::BigInt)
    }
    /// FLOAT.
    pub fn float() -> Self {
        nullable(TypeKind::Float)
    }
    /// DOUBLE.
    pub fn double() -> Self {
        nullable(TypeKind::Double)
    }
    /// DECIMAL(precision, scale); panics never, but [`DataType::validate`] rejects bad values.
    pub fn decimal(precision: u32, scale: u32) -> Self {
        nullable(TypeKind::Decimal { precision, scale })
    }
    /// CHAR(length).
    pub fn char(length: u32) -> Self {
        nullable(TypeKind::Char { length })
    }
    /// STRING.
    pub fn string() -> Self {
        nullable(TypeKind::String)
    }
    /// BINARY(length).
    pub fn binary(length: u32) -> Self {
        nullable(TypeKind::Binary { length })
    }
    /// BYTES.
    pub fn bytes() -> Self {
        nullable(TypeKind::Bytes)
    }
    /// DATE.
    pub fn date() -> Self {
        nullable(TypeKind::Date)
    }
    /// TIME(precision); Fluss's default TIME is TIME(0).
    pub fn time(precision: u32) -> Self {
        nullable(TypeKind::Time { precision })
    }
    /// TIMESTAMP(precision); Fluss's default TIMESTAMP is TIMESTAMP(6).
    pub fn timestamp(precision: u32) -> Self {
        nullable(TypeKind::Timestamp { precision })
    }
    /// TIMESTAMP_LTZ(precision); Fluss's default is TIMESTAMP_LTZ(6).
    pub fn timestamp_ltz(precision: u32) -> Self {
        nullable(TypeKind::TimestampLtz { precision })
    }
    /// `ARRAY<element>`.
    pub fn array(element: DataType) -> Self {
        nullable(TypeKind::Array(Box::new(element)))
    }
    /// MAP<key, value>; the key is made NOT NULL as Fluss does.
    pub fn map(key: DataType, value: DataType) -> Self {
        nullable(TypeKind::Map(Box::new(key.not_null()), Box::new(value)))
    }
    /// ROW<fields...>.
    pub fn row(fields: Vec<DataField>) -> Self {
        nullable(TypeKind::Row(fields))
    }

    /// The same type, NOT NULL.
    pub fn not_null(self) -> Self {
        self.with_nullable(false)
    }

    /// The same type with the given nullability.
    pub fn with_nullable(mut self, nullable: bool) -> Self {
        self.nullable = nullable;
        self
    }

    /// Checks precisions, scales and lengths against Fluss's limits.
    pub fn validate(&self) -> Result<()> {
        match &self.kind {
            TypeKind::Decimal { precision, scale } => {
                if *precision < 1 || *precision > MAX_DECIMAL_PRECISION {
                    return Err(Error::invalid(format!(
                        "Decimal precision must be between 1 and {MAX_DECIMAL_PRECISION} (both inclusive), got {precision}"
                    )));
                }
                if scale > precision {
                    return Err(Error::invalid(format!(
                        "Decimal scale must be between 0 and the precision {precision} (both inclusive), got {scale}"
                    )));
                }
            }
            TypeKind::Char { length } | TypeKind::Binary { length } if *length < 1 => {
                return Err(Error::invalid(format!("{self}: length must be at least 1")));
            }
            TypeKind::Time { precision }
            | TypeKind::Timestamp { precision }
            | TypeKind::TimestampLtz { precision }
                if *precision > MAX_TIME_PRECISION =>
            {
                return Err(Error::invalid(format!(
                    "{self}: precision must be between 0 and {MAX_TIME_PRECISION} (both inclusive)"
                )));
            }
            TypeKind::Array(e) => e.validate()?,
            TypeKind::Map(k, v) => {
                k.validate()?;
                v.validate()?;
            }
            TypeKind::Row(fields) => {
                for f in fields {
                    f.data_type.validate()?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Fluss's type-root name as used in the JSON `type` field (e.g. `INTEGER`, `TIMESTAMP_WITHOUT_TIME_ZONE`).
    pub fn type_root_name(&self) -> &'static str {
        match &self.kind {
            TypeKind::Boolean => "BOOLEAN",
            TypeKind::TinyInt => "TINYINT",
            TypeKind::SmallInt => "SMALLINT",
            TypeKind::Int => "INTEGER",
            TypeKind::BigInt => "BIGINT",
            TypeKind::Float => "FLOAT",
            TypeKind::Double => "DOUBLE",
            TypeKind::Decimal { .. } => "DECIMAL",
            TypeKind::Char { .. } => "CHAR",
            TypeKind::String => "STRING",
            TypeKind::Binary { .. } => "BINARY",
            TypeKind::Bytes => "BYTES",
            TypeKind::Date => "DATE",
            TypeKind::Time { .. } => "TIME_WITHOUT_TIME_ZONE",
            TypeKind::Timestamp { .. } => "TIMESTAMP_WITHOUT_TIME_ZONE",
            TypeKind::TimestampLtz { .. } => "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
            TypeKind::Array(_) => "ARRAY",
            TypeKind::Map(..) => "MAP",
            TypeKind::Row(_) => "ROW",
        }
    }

    /// Whether a DECIMAL is stored compactly (precision <= 18) — false for other types.
    pub fn is_compact_decimal(&self) -> bool {
        matches!(self.kind, TypeKind::Decimal { precision, .. } if precision <= MAX_COMPACT_DECIMAL_PRECISION)
    }

    /// The fields of a ROW type (None for other types).
    pub fn row_fields(&self) -> Option<&[DataField]> {
        match &self.kind {
            TypeKind::Row(f) => Some(f),
            _ => None,
        }
    }

    /// The JSON value of Fluss's DataTypeJsonSerde.
    pub fn to_json_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::from(self.type_root_name()));
        if !self.nullable {
            m.insert("nullable".into(), Value::Bool(false));
        }
        match &self.kind {
            TypeKind::Char { length } | TypeKind::Binary { length } => {
                m.insert("length".into(), Value::from(*length));
            }
            TypeKind::Decimal { precision, scale } => {
                m.insert("precision".into(), Value::from(*precision));
                m.insert("scale".into(), Value::from(*scale));
            }
            TypeKind::Time { precision }
            | TypeKind::Timestamp { precision }
            | TypeKind::TimestampLtz { precision } => {
                m.insert("precision".into(), Value::from(*precision));
            }
            TypeKind::Array(e) => {
                m.insert("element_type".into(), e.to_json_value());
            }
            TypeKind::Map(k, v) => {
                m.insert("key_type".into(), k.to_json_value());
                m.insert("value_type".into(), v.to_json_value());
            }
            TypeKind::Row(fields) => {
                let arr = fields
                    .iter()
                    .map(|f| {
                        let mut fm = Map::new();
                        fm.insert("name".into(), Value::from(f.name.clone()));
                        fm.insert("field_type".into(), f.data_type.to_json_value());
                        if let Some(d) = &f.description {
                            fm.insert("description".into(), Value::from(d.clone()));
                        }
                        fm.insert("field_id".into(), Value::from(f.field_id));
                        Value::Object(fm)
                    })
                    .collect();
                m.insert("fields".into(), Value::Array(arr));
            }
            _ => {}
        }
        Value::Object(m)
    }

    /// Parses the JSON value of Fluss's DataTypeJsonSerde.
    pub fn from_json_value(v: &Value) -> Result<DataType> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid(format!("data type JSON must be an object, got {v}")))?;
        let root = obj
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("data type JSON has no string field 'type'"))?;
        let int_field = |name: &str| -> Result<u32> {
            obj.get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| Error::invalid(format!("data type {root} needs a numeric '{name}'")))
        };
        let sub = |name: &str| -> Result<DataType> {
            let node = obj
                .get(name)
                .ok_or_else(|| Error::invalid(format!("data type {root} needs '{name}'")))?;
            DataType::from_json_value(node)
        };
        let kind = match root {
            "BOOLEAN" => TypeKind::Boolean,
            "TINYINT" => TypeKind::TinyInt,
            "SMALLINT" => TypeKind::SmallInt,
            "INTEGER" => TypeKind::Int,
            "BIGINT" => TypeKind::BigInt,
            "FLOAT" => TypeKind::Float,
            "DOUBLE" => TypeKind::Double,
            "DECIMAL" => TypeKind::Decimal {
                precision: int_field("precision")?,
                scale: int_field("scale")?,
            },
            "CHAR" => TypeKind::Char {
                length: int_field("length")?,
            },
            "STRING" => TypeKind::String,
            "BINARY" => TypeKind::Binary {
                length: int_field("length")?,
            },
            "BYTES" => TypeKind::Bytes,
            "DATE" => TypeKind::Date,
            "TIME_WITHOUT_TIME_ZONE" => TypeKind::Time {
                precision: int_field("precision")?,
            },
            "TIMESTAMP_WITHOUT_TIME_ZONE" => TypeKind::Timestamp {
                precision: int_field("precision")?,
            },
            "TIMESTAMP_WITH_LOCAL_TIME_ZONE" => TypeKind::TimestampLtz {
                precision: int_field("precision")?,
            },
            "ARRAY" => TypeKind::Array(Box::new(sub("element_type")?)),
            "MAP" => TypeKind::Map(
                Box::new(sub("key_type")?.not_null()),
                Box::new(sub("value_type")?),
            ),
            "ROW" => {
                let arr = obj
                    .get("fields")
                    .and_then(Value::as_array)
                    .ok_or_else(|| Error::invalid("ROW data type needs an array 'fields'"))?;
                let mut fields = Vec::with_capacity(arr.len());
                for f in arr {
                    let name = f
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| Error::invalid("ROW field needs a string 'name'"))?;
                    let ft = f.get("field_type").ok_or_else(|| {
                        Error::invalid(format!("ROW field {name} needs 'field_type'"))
                    })?;
                    let description = f
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let field_id = f
                        .get("field_id")
                        .and_then(Value::as_i64)
                        .map(|n| n as i32)
                        .unwrap_or(-1);
                    fields.push(DataField {
                        name: name.to_string(),
                        data_type: DataType::from_json_value(ft)?,
                        description,
                        field_id,
                    });
                }
                TypeKind::Row(fields)
            }
            other => {
                return Err(Error::unsupported(format!(
                    "unsupported Fluss type root: {other}"
                )))
            }
        };
        let nullable = match obj.get("nullable") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => other.as_str().map(|s| s == "true").unwrap_or(false),
        };
        let t = DataType { kind, nullable };
        t.validate()?;
        Ok(t)
    }
}

fn escape_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TypeKind::Boolean => f.write_str("BOOLEAN")?,
            TypeKind::TinyInt => f.write_str("TINYINT")?,
            TypeKind::SmallInt => f.write_str("SMALLINT")?,
            TypeKind::Int => f.write_str("INT")?,
            TypeKind::BigInt => f.write_str("BIGINT")?,
            TypeKind::Float => f.write_str("FLOAT")?,
            TypeKind::Double => f.write_str("DOUBLE")?,
            TypeKind::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})")?,
            TypeKind::Char { length } => write!(f, "CHAR({length})")?,
            TypeKind::String => f.write_str("STRING")?,
            TypeKind::Binary { length } => write!(f, "BINARY({length})")?,
            TypeKind::Bytes => f.write_str("BYTES")?,
            TypeKind::Date => f.write_str("DATE")?,
            TypeKind::Time { precision } => write!(f, "TIME({precision})")?,
            TypeKind::Timestamp { precision } => write!(f, "TIMESTAMP({precision})")?,
            TypeKind::TimestampLtz { precision } => write!(f, "TIMESTAMP_LTZ({precision})")?,
            TypeKind::Array(e) => write!(f, "ARRAY<{e}>")?,
            TypeKind::Map(k, v) => write!(f, "MAP<{k}, {v}>")?,
            TypeKind::Row(fields) => {
                f.write_str("ROW<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{} {}", escape_identifier(&field.name), field.data_type)?;
                    if field.description.is_some() {
                        f.write_str(" '...'")?;
                    }
                }
                f.write_str(">")?;
            }
        }
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden JSON from fluss-common/src/test/java/org/apache/fluss/utils/json/DataTypeJsonSerdeTest.java.
    #[test]
    fn json_golden_from_data_type_json_serde_test() {
        let types = vec![
            DataType::boolean(),
            DataType::tinyint(),
            DataType::smallint(),
            DataType::int(),
            DataType::bigint(),
            DataType::float(),
            DataType::double(),
            DataType::decimal(10, 0),
            DataType::decimal(15, 5),
            DataType::char(1),
            DataType::char(5),
            DataType::string(),
            DataType::binary(1),
            DataType::binary(100),
            DataType::bytes(),
            DataType::date(),
            DataType::time(0),
            DataType::time(3),
            DataType::timestamp(6),
            DataType::timestamp(3),
            DataType::timestamp_ltz(6),
            DataType::timestamp_ltz(3),
            DataType::array(DataType::int().not_null()),
            DataType::map(DataType::bigint().not_null(), DataType::int().not_null()),
            DataType::row(vec![
                DataField::new("f0", DataType::bigint()),
                DataField::new("f1", DataType::int().not_null()).with_id(1),
                DataField::new("f2", DataType::string()).with_id(2),
            ]),
        ];
        let expected = [
            r#"{"type":"BOOLEAN"}"#,
            r#"{"type":"BOOLEAN","nullable":false}"#,
            r#"{"type":"TINYINT"}"#,
            r#"{"type":"TINYINT","nullable":false}"#,
            r#"{"type":"SMALLINT"}"#,
            r#"{"type":"SMALLINT","nullable":false}"#,
            r#"{"type":"INTEGER"}"#,
            r#"{"type":"INTEGER","nullable":false}"#,
            r#"{"type":"BIGINT"}"#,
            r#"{"type":"BIGINT","nullable":false}"#,
            r#"{"type":"FLOAT"}"#,
            r#"{"type":"FLOAT","nullable":false}"#,
            r#"{"type":"DOUBLE"}"#,
            r#"{"type":"DOUBLE","nullable":false}"#,
            r#"{"type":"DECIMAL","precision":10,"scale":0}"#,
            r#"{"type":"DECIMAL","nullable":false,"precision":10,"scale":0}"#,
            r#"{"type":"DECIMAL","precision":15,"scale":5}"#,
            r#"{"type":"DECIMAL","nullable":false,"precision":15,"scale":5}"#,
            r#"{"type":"CHAR","length":1}"#,
            r#"{"type":"CHAR","nullable":false,"length":1}"#,
            r#"{"type":"CHAR","length":5}"#,
            r#"{"type":"CHAR","nullable":false,"length":5}"#,
            r#"{"type":"STRING"}"#,
            r#"{"type":"STRING","nullable":false}"#,
            r#"{"type":"BINARY","length":1}"#,
            r#"{"type":"BINARY","nullable":false,"length":1}"#,
            r#"{"type":"BINARY","length":100}"#,
            r#"{"type":"BINARY","nullable":false,"length":100}"#,
            r#"{"type":"BYTES"}"#,
            r#"{"type":"BYTES","nullable":false}"#,
            r#"{"type":"DATE"}"#,
            r#"{"type":"DATE","nullable":false}"#,
            r#"{"type":"TIME_WITHOUT_TIME_ZONE","precision":0}"#,
            r#"{"type":"TIME_WITHOUT_TIME_ZONE","nullable":false,"precision":0}"#,
            r#"{"type":"TIME_WITHOUT_TIME_ZONE","precision":3}"#,
            r#"{"type":"TIME_WITHOUT_TIME_ZONE","nullable":false,"precision":3}"#,
            r#"{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":6}"#,
            r#"{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","nullable":false,"precision":6}"#,
            r#"{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":3}"#,
            r#"{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","nullable":false,"precision":3}"#,
            r#"{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":6}"#,
            r#"{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","nullable":false,"precision":6}"#,
            r#"{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":3}"#,
            r#"{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","nullable":false,"precision":3}"#,
            r#"{"type":"ARRAY","element_type":{"type":"INTEGER","nullable":false}}"#,
            r#"{"type":"ARRAY","nullable":false,"element_type":{"type":"INTEGER","nullable":false}}"#,
            r#"{"type":"MAP","key_type":{"type":"BIGINT","nullable":false},"value_type":{"type":"INTEGER","nullable":false}}"#,
            r#"{"type":"MAP","nullable":false,"key_type":{"type":"BIGINT","nullable":false},"value_type":{"type":"INTEGER","nullable":false}}"#,
            r#"{"type":"ROW","fields":[{"name":"f0","field_type":{"type":"BIGINT"},"field_id":-1},{"name":"f1","field_type":{"type":"INTEGER","nullable":false},"field_id":1},{"name":"f2","field_type":{"type":"STRING"},"field_id":2}]}"#,
            r#"{"type":"ROW","nullable":false,"fields":[{"name":"f0","field_type":{"type":"BIGINT"},"field_id":-1},{"name":"f1","field_type":{"type":"INTEGER","nullable":false},"field_id":1},{"name":"f2","field_type":{"type":"STRING"},"field_id":2}]}"#,
        ];
        let mut i = 0;
        for t in types {
            for n in [true, false] {
                let t = t.clone().with_nullable(n);
                let json = serde_json::to_string(&t.to_json_value()).unwrap();
                assert_eq!(json, expected[i], "type {t}");
                let back =
                    DataType::from_json_value(&serde_json::from_str(expected[i]).unwrap()).unwrap();
                assert_eq!(back, t);
                i += 1;
            }
        }
    }

    #[test]
    fn display_is_fluss_sql_text() {
        assert_eq!(DataType::int().to_string(), "INT");
        assert_eq!(DataType::int().not_null().to_string(), "INT NOT NULL");
        assert_eq!(DataType::decimal(10, 2).to_string(), "DECIMAL(10, 2)");
        assert_eq!(DataType::timestamp_ltz(3).to_string(), "TIMESTAMP_LTZ(3)");
        assert_eq!(
            DataType::map(DataType::string(), DataType::array(DataType::int())).to_string(),
            "MAP<STRING NOT NULL, ARRAY<INT>>"
        );
        assert_eq!(
            DataType::row(vec![DataField::new("a", DataType::int())]).to_string(),
            "ROW<`a` INT>"
        );
    }

    #[test]
    fn validation() {
        assert!(DataType::decimal(39, 0).validate().is_err());
        assert!(DataType::decimal(5, 6).validate().is_err());
        assert!(DataType::timestamp(10).validate().is_err());
        assert!(DataType::char(0).validate().is_err());
        assert!(DataType::decimal(38, 10).validate().is_ok());
    }
}
