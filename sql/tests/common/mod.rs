//! The harness of the SQL tests: an embedded `riverlet-server` on a free port, a core
//! connection to it, tables created through the core's admin and a DataFusion session.
#![allow(dead_code)]

use std::collections::BTreeMap;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::{parse_columns, Schema, TableDescriptor, TablePath};
use riverlet_sql::SqlOptions;

/// A server, a connection and a session whose default database is `fluss`.
pub struct Env {
    pub conn: Connection,
    pub ctx: SessionContext,
    _server: riverlet_server::LocalServer,
    _dir: tempfile::TempDir,
}

impl Env {
    /// A fresh server; datetime texts of the session are read in UTC.
    pub async fn new() -> Env {
        Env::with_server_options(&[]).await
    }

    /// A fresh server tiering lake-enabled tables to `format`'s lake (`iceberg` or `paimon`)
    /// in the warehouse `lake_warehouse()`; lake commits only by [`Env::commit_lake`].
    pub async fn with_lake(format: &str) -> Env {
        let warehouse = format!("datalake.{format}.warehouse");
        Env::with_server_options(&[("datalake.format", format), (&warehouse, "")]).await
    }

    /// The warehouse directory of [`Env::with_lake`].
    pub fn lake_warehouse(&self) -> std::path::PathBuf {
        self._dir.path().join("warehouse")
    }

    /// Commits the new rows of every lake-enabled table to the lake now.
    pub fn commit_lake(&self) {
        self._server.commit_lake().unwrap();
    }

    /// The server's bootstrap address.
    pub fn bootstrap(&self) -> String {
        self._server.bootstrap_servers()
    }

    /// A fresh server with `options` (Fluss names; an empty value of a `*.warehouse` option is
    /// the warehouse directory of [`Env::lake_warehouse`]).
    async fn with_server_options(options: &[(&str, &str)]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let mut config = riverlet_server::ServerConfig::new(dir.path()).with_port(0);
        let warehouse = dir.path().join("warehouse");
        for (key, value) in options {
            let value = match *value {
                "" if key.ends_with(".warehouse") => warehouse.to_str().unwrap(),
                v => v,
            };
            config.set(key, value).unwrap();
        }
        let server = riverlet_server::LocalServer::start(config).unwrap();
        // INSERT INTO a partitioned table creates its partitions, as Fluss's Spark writes do.
        let props: BTreeMap<String, String> = [
            ("bootstrap.servers".to_string(), server.bootstrap_servers()),
            (
                "client.writer.dynamic-create-partition.enabled".to_string(),
                "true".to_string(),
            ),
        ]
        .into();
        let conn = Connection::connect(ClientConfig::from_properties(&props).unwrap())
            .await
            .unwrap();
        conn.admin().create_database("fluss", true).await.unwrap();
        let options = SqlOptions {
            time_zone: Some("UTC".to_string()),
            ..SqlOptions::default()
        };
        let ctx = riverlet_sql::session(conn.clone(), &options);
        Env {
            conn,
            ctx,
            _server: server,
            _dir: dir,
        }
    }

    /// Creates `fluss.<name>` from a column list, primary key, partition keys and bucket count.
    pub async fn create(
        &self,
        name: &str,
        columns: &str,
        primary_key: &[&str],
        partition_by: &[&str],
        buckets: i32,
    ) -> Table {
        let mut columns = parse_columns(columns).unwrap();
        for c in &mut columns {
            if primary_key.contains(&c.name.as_str()) {
                c.data_type = c.data_type.clone().not_null();
            }
        }
        let mut schema = Schema::builder().from_columns(columns);
        if !primary_key.is_empty() {
            schema = schema.primary_key(
                primary_key
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<String>>(),
            );
        }
        let descriptor = TableDescriptor::builder(schema.build().unwrap())
            .partitioned_by(
                partition_by
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<String>>(),
            )
            .distributed_by(Some(buckets), Vec::<String>::new())
            .build()
            .unwrap();
        let path = TablePath::new("fluss", name);
        let admin = self.conn.admin();
        admin.create_table(&path, &descriptor, false).await.unwrap();
        self.conn.table(&path).await.unwrap()
    }

    /// Runs a statement and returns its rows as a printed table.
    pub async fn query(&self, sql: &str) -> String {
        match self.try_query(sql).await {
            Ok(t) => t,
            Err(e) => panic!("{sql}: {e}"),
        }
    }

    /// Runs a statement.
    pub async fn try_query(&self, sql: &str) -> Result<String, DataFusionError> {
        let batches = self.ctx.sql(sql).await?.collect().await?;
        Ok(pretty_format_batches(&batches)?.to_string())
    }

    /// The physical plan of a statement.
    pub async fn plan(&self, sql: &str) -> String {
        self.query(&format!("EXPLAIN {sql}")).await
    }
}

/// `text` with the leading indentation of a Rust string literal removed.
pub fn table(text: &str) -> String {
    text.trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}
