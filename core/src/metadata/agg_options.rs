//! Aggregate functions given as table options, the way Fluss's Flink connector takes them:
//! `'fields.<column>.agg' = '<function>'` and `'fields.<column>.<function>.<param>' = '<value>'`
//! (e.g. `'fields.tags.listagg.delimiter' = ';'`). A table with `table.merge-engine =
//! aggregation` gets them as the `agg_function` of its schema columns, which is what the server
//! reads; the options themselves are kept as custom properties, as Flink's catalog keeps them.

use super::schema::AggFunction;
use super::table::{MergeEngine, TableDescriptor};
use crate::Result;

const PREFIX: &str = "fields.";
const SUFFIX: &str = ".agg";

/// Fluss 0.9's aggregate function names (`AggFunctionType`, lower case).
pub const AGG_FUNCTIONS: &[&str] = &[
    "bool_and",
    "bool_or",
    "first_value",
    "first_value_ignore_nulls",
    "last_value",
    "last_value_ignore_nulls",
    "listagg",
    "max",
    "min",
    "product",
    "rbm32",
    "rbm64",
    "string_agg",
    "sum",
];

/// Moves `fields.*` options of an aggregation table into its schema (see the module docs).
/// Fails naming the column for an unknown function or an option naming no column; a column
/// that already has a function in its schema keeps it.
pub fn apply_agg_options(d: &mut TableDescriptor) -> Result<()> {
    let is_agg = matches!(d.merge_engine(), Ok(Some(MergeEngine::Aggregation)));
    let fields: Vec<String> = d
        .properties
        .keys()
        .filter(|k| k.starts_with(PREFIX))
        .cloned()
        .collect();
    // Not `table.*` options: Fluss keeps them with the user's custom properties.
    for k in fields {
        if let Some(v) = d.properties.remove(&k) {
            d.custom_properties.insert(k, v);
        }
    }
    if !is_agg {
        return Ok(());
    }
    let options = d.custom_properties.clone();
    for (key, value) in options.iter() {
        let Some(column) = key
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.strip_suffix(SUFFIX))
        else {
            continue;
        };
        let Some(col) = d.schema.columns.iter_mut().find(|c| c.name == column) else {
            crate::bail_invalid!(
                "option '{key}' names column '{column}', which the table does not have \
                 (columns: {})",
                d.schema.column_names().join(", ")
            );
        };
        let function = value.trim().to_ascii_lowercase();
        if function.is_empty() {
            crate::bail_invalid!("Empty aggregation function name for column '{column}'");
        }
        if !AGG_FUNCTIONS.contains(&function.as_str()) {
            crate::bail_invalid!(
                "Unknown aggregation function for column '{column}': {value}; supported \
                 functions: {}",
                AGG_FUNCTIONS.join(", ")
            );
        }
        if col.agg_function.is_some() {
            continue;
        }
        let param_prefix = format!("{PREFIX}{column}.{function}.");
        let parameters = options
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(&param_prefix)
                    .map(|p| (p.to_string(), v.clone()))
            })
            .collect();
        col.agg_function = Some(AggFunction {
            function,
            parameters,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, Schema};

    fn descriptor(props: &[(&str, &str)]) -> Result<TableDescriptor> {
        let schema = Schema::builder()
            .column("id", DataType::int())
            .column("sales", DataType::bigint())
            .column("tags", DataType::string())
            .column("seen", DataType::timestamp(3))
            .primary_key(["id"])
            .build()
            .unwrap();
        let mut b = TableDescriptor::builder(schema);
        for (k, v) in props {
            b = b.property(*k, *v);
        }
        b.build()
    }

    #[test]
    fn options_become_schema_functions() {
        let d = descriptor(&[
            ("table.merge-engine", "aggregation"),
            ("fields.sales.agg", "SUM"),
            ("fields.tags.agg", "listagg"),
            ("fields.tags.listagg.delimiter", ";"),
        ])
        .unwrap();
        let f = |i: usize| d.schema.columns[i].agg_function.clone();
        assert_eq!(f(0), None);
        assert_eq!(
            f(1),
            Some(AggFunction {
                function: "sum".into(),
                parameters: vec![]
            })
        );
        assert_eq!(
            f(2),
            Some(AggFunction {
                function: "listagg".into(),
                parameters: vec![("delimiter".into(), ";".into())]
            })
        );
        assert_eq!(f(3), None);
        assert!(d.properties.keys().all(|k| !k.starts_with("fields.")));
        assert_eq!(d.custom_properties["fields.sales.agg"], "SUM");
        // The schema JSON carries them (what the server reads).
        let json = String::from_utf8(d.schema.to_json()).unwrap();
        assert!(json.contains(r#""agg_function":{"type":"sum"}"#), "{json}");
    }

    #[test]
    fn bad_options_name_the_column() {
        let e = descriptor(&[
            ("table.merge-engine", "aggregation"),
            ("fields.sales.agg", "median"),
        ])
        .unwrap_err();
        assert!(e.message().contains("column 'sales'"), "{e}");
        assert!(e.message().contains("median"), "{e}");
        let e = descriptor(&[
            ("table.merge-engine", "aggregation"),
            ("fields.nope.agg", "sum"),
        ])
        .unwrap_err();
        assert!(e.message().contains("'nope'"), "{e}");
        // Without the aggregation engine the options are only kept.
        let d = descriptor(&[("fields.sales.agg", "sum")]).unwrap();
        assert_eq!(d.schema.columns[1].agg_function, None);
    }
}
