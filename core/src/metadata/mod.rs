//! Fluss metadata: data types and their Arrow mapping, schemas, table descriptors, paths.

pub mod agg_options;
pub mod datatype;
pub mod evolution;
pub mod schema;
pub mod sql_type;
pub mod table;

pub use datatype::{DataField, DataType, TypeKind};
pub use evolution::AddColumn;
pub use schema::{
    from_arrow_field, from_arrow_type, to_arrow_field, to_arrow_type, AggFunction, Column, Schema,
    SchemaBuilder,
};
pub use sql_type::{parse_columns, parse_data_type};
pub use table::{
    parse_duration_ms, ArrowCompressionType, DeleteBehavior, KvFormat, LogFormat, MergeEngine,
    PartitionSpec, TableDescriptor, TableDescriptorBuilder, TableInfo, TableOptions, TablePath,
};
pub use table::{split_table_name, validate_database_name, validate_table_name, ViewKind};
