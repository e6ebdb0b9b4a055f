"""A dist Spark JAR on a stock Spark: `spark-submit --master local[2] --jars <JAR> spark_local.py`.

Run by tests/dist/jars.sh with pyspark from PyPI and `riverlet serve` (the embedded server)
started beside it; RIVERLET_BOOTSTRAP names the server, DIST_JAR the JAR passed with --jars.
Nothing but that JAR is added to Spark. Checks, each against values written here:
  - the connector's classes come from DIST_JAR and Arrow's vectors from Spark's own jars
    (one Arrow on the class path), and the native library loads from the JAR;
  - INSERT INTO a log table (append) and a primary-key table (upsert);
  - a catalog read with a filter the connector pushes (EXPLAIN shows it) and its rows;
  - the primary-key table's latest view;
  - fluss_incremental_between_timestamp over two windows split by a time point taken between
    two appends (each window holds exactly the rows appended in it).
Exit status 0 when every check holds; each failed check is printed.
"""

import os
import sys
import time

from pyspark.sql import SparkSession

jar = os.environ["DIST_JAR"]
bootstrap = os.environ["RIVERLET_BOOTSTRAP"]
db = "dist_check_%d" % os.getpid()
failures = []


def check(what, got, want):
    if got == want:
        print("ok: %s" % what)
    else:
        failures.append(what)
        print("FAIL: %s: got %r, expected %r" % (what, got, want))


spark = (
    SparkSession.builder.appName("riverlet-dist-check")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.catalog.fluss_catalog", "io.riverlet.spark.SparkCatalog")
    .config("spark.sql.catalog.fluss_catalog.bootstrap.servers", bootstrap)
    .config("spark.sql.extensions", "io.riverlet.spark.RiverletSparkSessionExtensions")
    .config("spark.sql.defaultCatalog", "fluss_catalog")
    .getOrCreate()
)


def rows(q):
    return [tuple(r) for r in spark.sql(q).collect()]


def explain(q):
    return "\n".join(r[0] for r in spark.sql("EXPLAIN " + q).collect())


def origin(cls):
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    c = jvm.java.lang.Class.forName(cls, True, loader)
    return c.getProtectionDomain().getCodeSource().getLocation().getPath()


try:
    spark.sql("CREATE NAMESPACE fluss_catalog.%s" % db)
    spark.sql("USE fluss_catalog.%s" % db)
    spark.sql("CREATE TABLE orders (order_id BIGINT, item STRING, amount INT) "
              "TBLPROPERTIES ('bucket.num' = '3')")
    spark.sql("CREATE TABLE prices (id INT, price DOUBLE) "
              "TBLPROPERTIES ('primary.key' = 'id', 'bucket.num' = '2')")

    t0 = int(time.time() * 1000)
    time.sleep(1.0)
    spark.sql("INSERT INTO orders VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
    time.sleep(1.0)
    t1 = int(time.time() * 1000)
    time.sleep(1.0)
    spark.sql("INSERT INTO orders VALUES (4, 'd', 40), (5, 'e', 50)")
    spark.sql("INSERT INTO prices VALUES (1, 1.5), (2, 2.5)")
    spark.sql("INSERT INTO prices VALUES (1, 9.5)")

    check("the connector's classes come from the dist JAR",
          os.path.basename(origin("io.riverlet.spark.SparkCatalog")), os.path.basename(jar))
    check("the Java API's classes come from the dist JAR",
          os.path.basename(origin("io.riverlet.Connection")), os.path.basename(jar))
    arrow = origin("org.apache.arrow.vector.VectorSchemaRoot")
    check("Arrow's vectors are Spark's own (%s)" % arrow,
          os.path.dirname(os.path.realpath(arrow)),
          os.path.realpath(os.path.join(os.environ["SPARK_HOME"], "jars")))

    q = "SELECT order_id, amount FROM orders WHERE amount >= 30 ORDER BY order_id"
    check("pushed-down read of the log table", rows(q), [(3, 30), (4, 40), (5, 50)])
    plan = explain(q)
    check("EXPLAIN shows the pushed filter",
          "PushedFilters: [amount IS NOT NULL, amount >= 30]" in plan, True)
    check("primary-key table's latest view", rows("SELECT * FROM prices ORDER BY id"),
          [(1, 9.5), (2, 2.5)])
    check("fluss_incremental_between_timestamp [t0, t1)",
          rows("SELECT order_id, item FROM fluss_incremental_between_timestamp("
               "'orders', '%d', '%d') ORDER BY order_id" % (t0, t1)),
          [(1, "a"), (2, "b"), (3, "c")])
    check("fluss_incremental_between_timestamp [t1, now)",
          rows("SELECT order_id FROM fluss_incremental_between_timestamp('orders', '%d') "
               "WHERE amount > 0 ORDER BY order_id" % t1),
          [(4,), (5,)])
finally:
    try:
        spark.sql("USE fluss_catalog.default")
    except Exception:  # noqa: BLE001 - best effort: the database may not exist
        pass
    try:
        spark.sql("DROP NAMESPACE IF EXISTS fluss_catalog.%s CASCADE" % db)
    except Exception as e:  # noqa: BLE001 - cleanup must not hide the result
        print("note: could not drop %s: %s" % (db, e))
    spark.stop()

print("spark_local: %s" % ("FAILED: " + ", ".join(failures) if failures else "all checks pass"))
sys.exit(1 if failures else 0)
