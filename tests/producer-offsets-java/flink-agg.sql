-- Fluss's Flink connector (fluss-flink-1.20 0.9.1), and Riverlet's (riverlet-flink-1.20),
-- writing tables of the aggregation merge engine (Fluss's sink registers, reads and deletes
-- producer offsets for the undo recovery of such tables), then point queries; run by
-- flink-agg.sh through tests/flink-compare's StatementRunner. Each statement's expected result
-- follows it as `-- => ` lines (OK, ERROR, or the rows of a query; none: no row), and
-- `-- [quick]` before a statement puts it in the subset `flink-agg.sh --quick` runs (make test:
-- the first table, one table per family of functions, every delete-behaviour case).
--
-- The specification is Apache Fluss 0.9.1's documentation of the engine
-- (website/docs/table-design/merge-engines/aggregation.md): every function's Flink SQL example
-- (id 1) with the result the page states, the page's statements as written except where noted.
-- Rows with id 2 exercise each function's stated null handling ("Null values are ignored" /
-- "skipped"); their expected values follow from that sentence. The "Delete Behavior" section's
-- three settings and its partial-update delete come last.
--
-- The INSERTs come in three rounds: the page's first INSERT of every table, then its second
-- ones (and the null rows), then its third ones, each a Flink job of its own. (As statement
-- sets, one job per round, Fluss's connector lost the rows of some tables against Apache
-- Fluss 0.9.1 too: the sinks of one job share a producer id for their undo recovery.)
--
-- Notes on the page: test_first_value writes its dates as '2024-01-01', which Flink 1.20
-- refuses for a DATE column ("Column types of query result and sink ... do not match"): DATE
-- literals here. first_value's sentence "Null values are retained if received first" is not
-- what Fluss 0.9.1 does (FieldFirstValueAgg replaces a null accumulator), so first_value has no
-- null row. rbm64 is in flink-agg-rbm64.sql (run against Fluss only).
--
-- A first table with hand-worked sums and maxima: id 1 -> 10+32, max(3,1); id 2 -> 5+1, max(7,9),
-- its second INSERT in batch mode.
-- [quick]
-- exec batch
CREATE TABLE agg_totals (id BIGINT, total BIGINT, maxv INT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('bucket.num' = '2', 'table.merge-engine' = 'aggregation', 'fields.total.agg' = 'sum', 'fields.maxv.agg' = 'max')
-- => OK
-- [quick]
-- exec stream
INSERT INTO agg_totals VALUES (CAST(1 AS BIGINT), CAST(10 AS BIGINT), 3), (CAST(2 AS BIGINT), CAST(5 AS BIGINT), 7), (CAST(1 AS BIGINT), CAST(32 AS BIGINT), 1)
-- => OK
-- [quick]
-- exec batch
INSERT INTO agg_totals VALUES (CAST(2 AS BIGINT), CAST(1 AS BIGINT), 9)
-- => OK
-- [quick]
-- query batch
SELECT * FROM agg_totals WHERE id = 1
-- => +I[1, 42, 3]
-- [quick]
-- query batch
SELECT * FROM agg_totals WHERE id = 2
-- => +I[2, 6, 9]
--
-- Usage Examples: max, sum and the default last_value_ignore_nulls
-- exec batch
CREATE TABLE product_stats (
    product_id BIGINT,
    price DOUBLE,
    sales BIGINT,
    last_update_time TIMESTAMP(3),
    PRIMARY KEY (product_id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.price.agg' = 'max',
    'fields.sales.agg' = 'sum'
)
-- => OK
--
-- sum
-- exec batch
CREATE TABLE test_sum (
    id BIGINT,
    amount DECIMAL(10, 2),
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.amount.agg' = 'sum'
)
-- => OK
--
-- product
-- exec batch
CREATE TABLE test_product (
    id BIGINT,
    discount_factor DOUBLE,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.discount_factor.agg' = 'product'
)
-- => OK
--
-- max
-- exec batch
CREATE TABLE test_max (
    id BIGINT,
    temperature DOUBLE,
    reading_time TIMESTAMP(3),
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.temperature.agg' = 'max',
    'fields.reading_time.agg' = 'max'
)
-- => OK
--
-- min
-- exec batch
CREATE TABLE test_min  (
    id BIGINT,
    lowest_price DECIMAL(10, 2),
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.lowest_price.agg' = 'min'
)
-- => OK
--
-- last_value (null overwrites: the page's third INSERT)
-- exec batch
CREATE TABLE test_last_value  (
    id BIGINT,
    status STRING,
    last_login TIMESTAMP(3),
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.status.agg' = 'last_value',
    'fields.last_login.agg' = 'last_value'
)
-- => OK
--
-- last_value_ignore_nulls (nulls ignored: the page's second and third INSERTs)
-- exec batch
CREATE TABLE test_last_value_ignore_nulls  (
    id BIGINT,
    email STRING,
    phone STRING,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.email.agg' = 'last_value_ignore_nulls',
    'fields.phone.agg' = 'last_value_ignore_nulls'
)
-- => OK
--
-- first_value
-- [quick]
-- exec batch
CREATE TABLE test_first_value  (
    id BIGINT,
    first_purchase_date DATE,
    first_product STRING,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.first_purchase_date.agg' = 'first_value',
    'fields.first_product.agg' = 'first_value'
)
-- => OK
--
-- first_value_ignore_nulls (nulls first: the page's first INSERT)
-- exec batch
CREATE TABLE test_first_value_ignore_nulls  (
    id BIGINT,
    email STRING,
    verified_at TIMESTAMP(3),
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.email.agg' = 'first_value_ignore_nulls',
    'fields.verified_at.agg' = 'first_value_ignore_nulls'
)
-- => OK
--
-- listagg with the default and a ';' delimiter
-- [quick]
-- exec batch
CREATE TABLE test_listagg  (
    id BIGINT,
    tags1 STRING,
    tags2 STRING,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.tags1.agg' = 'listagg',
    'fields.tags2.agg' = 'listagg',
    'fields.tags2.listagg.delimiter' = ';'
)
-- => OK
--
-- string_agg, listagg's alias
-- exec batch
CREATE TABLE test_string_agg  (
    id BIGINT,
    tags1 STRING,
    tags2 STRING,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.tags1.agg' = 'string_agg',
    'fields.tags2.agg' = 'string_agg',
    'fields.tags2.string_agg.delimiter' = ';'
)
-- => OK
--
-- rbm32 (serialized RoaringBitmaps; the union is compared with the bytes the page states)
-- [quick]
-- exec batch
CREATE TABLE user_visits (
    user_id BIGINT,
    visit_bitmap BYTES,
    PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.visit_bitmap.agg' = 'rbm32'
)
-- => OK
--
-- bool_and
-- [quick]
-- exec batch
CREATE TABLE test_bool_and  (
    id BIGINT,
    has_all_permissions BOOLEAN,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.has_all_permissions.agg' = 'bool_and'
)
-- => OK
--
-- bool_or
-- exec batch
CREATE TABLE test_bool_or  (
    id BIGINT,
    has_any_alert BOOLEAN,
    PRIMARY KEY (id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.has_any_alert.agg' = 'bool_or'
)
-- => OK
--
-- Delete Behavior: 'ignore' (the default) ignores a delete, 'allow' removes the record, 'disable'
-- rejects it. The deletes come from a Top-1 per group: when id 2 overtakes id 1 the rank retracts
-- id 1 (an UPDATE_BEFORE of key 1, then an UPDATE_AFTER of key 2; Flink keeps the UPDATE_BEFORE
-- because the sink's key is not the rank's), which the connector must write as a delete of key 1.
-- [quick]
-- exec batch
CREATE TABLE agg_del_ignore (id BIGINT, total BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('table.merge-engine' = 'aggregation', 'fields.total.agg' = 'sum')
-- => OK
-- [quick]
-- exec batch
CREATE TABLE agg_del_allow (id BIGINT, total BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('table.merge-engine' = 'aggregation', 'fields.total.agg' = 'sum', 'table.delete.behavior' = 'allow')
-- => OK
-- [quick]
-- exec batch
CREATE TABLE agg_del_disable (id BIGINT, total BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('table.merge-engine' = 'aggregation', 'fields.total.agg' = 'sum', 'table.delete.behavior' = 'disable')
-- => OK
--
-- a partial update's delete with 'allow': its target column (a) set to null, the others kept; a record whose non-target columns are all null (id 3: b) removed
-- [quick]
-- exec batch
CREATE TABLE agg_del_partial (id BIGINT, a BIGINT, b BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('table.merge-engine' = 'aggregation', 'fields.a.agg' = 'sum', 'fields.b.agg' = 'sum', 'table.delete.behavior' = 'allow')
-- => OK
--
-- round 1: the page's first INSERTs
-- exec stream
INSERT INTO product_stats VALUES
    (1, 23.0, 15, TIMESTAMP '2024-01-01 10:00:00'),
    (1, 30.2, 20, TIMESTAMP '2024-01-01 11:00:00')
-- => OK
-- exec stream
INSERT INTO test_sum VALUES
    (1, 100.50),
    (1, 200.75)
-- => OK
-- exec stream
INSERT INTO test_product VALUES
    (1, 0.9),
    (1, 0.8)
-- => OK
-- exec stream
INSERT INTO test_max VALUES
    (1, 25.5, TIMESTAMP '2024-01-01 10:00:00'),
    (1, 28.3, TIMESTAMP '2024-01-01 11:00:00')
-- => OK
-- exec stream
INSERT INTO test_min VALUES
    (1, 99.99),
    (1, 79.99),
    (1, 89.99)
-- => OK
-- exec stream
INSERT INTO test_last_value VALUES
    (1, 'online', TIMESTAMP '2024-01-01 10:00:00')
-- => OK
-- exec stream
INSERT INTO test_last_value_ignore_nulls VALUES
    (1, 'user@example.com', '123-456')
-- => OK
-- [quick]
-- exec stream
INSERT INTO test_first_value VALUES
    (1, DATE '2024-01-01', 'ProductA'),
    (1, DATE '2024-02-01', 'ProductB')
-- => OK
-- exec stream
INSERT INTO test_first_value_ignore_nulls VALUES
    (1, CAST(NULL AS STRING), CAST(NULL AS TIMESTAMP(3)))
-- => OK
-- [quick]
-- exec stream
INSERT INTO test_listagg VALUES
    (1, 'developer', 'developer'),
    (1, 'java', 'java'),
    (1, 'flink', 'flink')
-- => OK
-- exec stream
INSERT INTO test_string_agg VALUES
    (1, 'developer', 'developer'),
    (1, 'java', 'java'),
    (1, 'flink', 'flink')
-- => OK
-- [quick]
-- exec stream
INSERT INTO user_visits VALUES (1, x'3A30000001000000000001001000000001000200')
-- => OK
-- [quick]
-- exec stream
INSERT INTO test_bool_and VALUES
    (1, true),
    (1, true),
    (1, false)
-- => OK
-- exec stream
INSERT INTO test_bool_or VALUES
    (1, false),
    (1, false),
    (1, true)
-- => OK
-- [quick]
-- exec stream
INSERT INTO agg_del_ignore SELECT id, total FROM (SELECT id, total, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id DESC) AS rn FROM (VALUES (1, CAST(1 AS BIGINT), CAST(10 AS BIGINT)), (1, CAST(2 AS BIGINT), CAST(20 AS BIGINT))) AS v(g, id, total)) WHERE rn = 1
-- => OK
-- [quick]
-- exec stream
INSERT INTO agg_del_allow SELECT id, total FROM (SELECT id, total, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id DESC) AS rn FROM (VALUES (1, CAST(1 AS BIGINT), CAST(10 AS BIGINT)), (1, CAST(2 AS BIGINT), CAST(20 AS BIGINT))) AS v(g, id, total)) WHERE rn = 1
-- => OK
-- [quick]
-- exec stream
INSERT INTO agg_del_partial VALUES (1, 10, 100), (3, 30, CAST(NULL AS BIGINT))
-- => OK
--
-- round 2: the page's second INSERTs, and the null rows (id 2)
-- exec stream
INSERT INTO test_sum VALUES (2, 100.50), (2, CAST(NULL AS DECIMAL(10, 2))), (2, 0.25)
-- => OK
-- exec stream
INSERT INTO test_product VALUES (2, 0.5), (2, CAST(NULL AS DOUBLE)), (2, 4.0)
-- => OK
-- exec stream
INSERT INTO test_max VALUES (2, CAST(NULL AS DOUBLE), CAST(NULL AS TIMESTAMP(3))),
    (2, 25.5, TIMESTAMP '2024-01-01 10:00:00'), (2, CAST(NULL AS DOUBLE), CAST(NULL AS TIMESTAMP(3)))
-- => OK
-- exec stream
INSERT INTO test_min VALUES (2, 99.99), (2, CAST(NULL AS DECIMAL(10, 2)))
-- => OK
-- exec stream
INSERT INTO test_last_value VALUES
    (1, 'offline', TIMESTAMP '2024-01-01 11:00:00')
-- => OK
-- exec stream
INSERT INTO test_last_value_ignore_nulls VALUES
    (1, CAST(NULL AS STRING), '789-012')
-- => OK
-- exec stream
INSERT INTO test_first_value_ignore_nulls VALUES
    (1, 'user@example.com', TIMESTAMP '2024-01-01 10:00:00')
-- => OK
-- exec stream
INSERT INTO test_listagg VALUES (2, 'a', 'a'), (2, CAST(NULL AS STRING), CAST(NULL AS STRING)), (2, 'b', 'b')
-- => OK
-- exec stream
INSERT INTO test_string_agg VALUES (2, 'a', 'a'), (2, CAST(NULL AS STRING), CAST(NULL AS STRING)), (2, 'b', 'b')
-- => OK
-- [quick]
-- exec stream
INSERT INTO user_visits VALUES (1, x'3A30000001000000000001001000000002000300')
-- => OK
-- exec stream
INSERT INTO test_bool_and VALUES (2, true), (2, CAST(NULL AS BOOLEAN))
-- => OK
-- exec stream
INSERT INTO test_bool_or VALUES (2, false), (2, CAST(NULL AS BOOLEAN))
-- => OK
-- [quick]
-- exec stream
INSERT INTO agg_del_partial (id, a) SELECT id, a FROM (SELECT id, a, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id DESC) AS rn FROM (VALUES (1, CAST(1 AS BIGINT), CAST(5 AS BIGINT)), (1, CAST(4 AS BIGINT), CAST(7 AS BIGINT)), (2, CAST(3 AS BIGINT), CAST(1 AS BIGINT)), (2, CAST(5 AS BIGINT), CAST(2 AS BIGINT))) AS v(g, id, a)) WHERE rn = 1
-- => OK
--
-- round 3: the page's third INSERTs, and rbm32's null row
-- exec stream
INSERT INTO test_last_value VALUES
    (1, CAST(NULL AS STRING), TIMESTAMP '2024-01-01 12:00:00')
-- => OK
-- exec stream
INSERT INTO test_last_value_ignore_nulls VALUES
    (1, 'new@example.com', CAST(NULL AS STRING))
-- => OK
-- exec stream
INSERT INTO test_first_value_ignore_nulls VALUES
    (1, 'other@example.com', TIMESTAMP '2024-01-02 10:00:00')
-- => OK
-- exec stream
INSERT INTO user_visits VALUES (2, x'3A30000001000000000001001000000001000200'), (2, CAST(NULL AS BYTES))
-- => OK
--
-- 'disable': the delete is rejected, the job fails (only ERROR-ness is compared)
-- [quick]
-- exec stream
INSERT INTO agg_del_disable SELECT id, total FROM (SELECT id, total, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id DESC) AS rn FROM (VALUES (1, CAST(1 AS BIGINT), CAST(10 AS BIGINT)), (1, CAST(2 AS BIGINT), CAST(20 AS BIGINT))) AS v(g, id, total)) WHERE rn = 1
-- => ERROR
--
-- the point queries, with the page's stated results under each
-- query batch
SELECT * FROM product_stats WHERE product_id = 1
-- => +I[1, 30.2, 35, 2024-01-01T11:00]
-- query batch
SELECT * FROM test_sum WHERE id = 1
-- => +I[1, 301.25]
-- query batch
SELECT * FROM test_sum WHERE id = 2
-- => +I[2, 100.75]
-- query batch
SELECT * FROM test_product WHERE id = 1
-- => +I[1, 0.7200000000000001]
-- query batch
SELECT * FROM test_product WHERE id = 2
-- => +I[2, 2.0]
-- query batch
SELECT * FROM test_max WHERE id = 1
-- => +I[1, 28.3, 2024-01-01T11:00]
-- query batch
SELECT * FROM test_max WHERE id = 2
-- => +I[2, 25.5, 2024-01-01T10:00]
-- query batch
SELECT * FROM test_min WHERE id = 1
-- => +I[1, 79.99]
-- query batch
SELECT * FROM test_min WHERE id = 2
-- => +I[2, 99.99]
-- query batch
SELECT * FROM test_last_value WHERE id = 1
-- => +I[1, null, 2024-01-01T12:00]
-- query batch
SELECT * FROM test_last_value_ignore_nulls WHERE id = 1
-- => +I[1, new@example.com, 789-012]
-- [quick]
-- query batch
SELECT * FROM test_first_value WHERE id = 1
-- => +I[1, 2024-01-01, ProductA]
-- query batch
SELECT * FROM test_first_value_ignore_nulls WHERE id = 1
-- => +I[1, user@example.com, 2024-01-01T10:00]
-- [quick]
-- query batch
SELECT * FROM test_listagg WHERE id = 1
-- => +I[1, developer,java,flink, developer;java;flink]
-- query batch
SELECT * FROM test_listagg WHERE id = 2
-- => +I[2, a,b, a;b]
-- query batch
SELECT * FROM test_string_agg WHERE id = 1
-- => +I[1, developer,java,flink, developer;java;flink]
-- query batch
SELECT * FROM test_string_agg WHERE id = 2
-- => +I[2, a,b, a;b]
-- [quick]
-- query batch
SELECT user_id, visit_bitmap = x'3A300000010000000000020010000000010002000300' FROM user_visits WHERE user_id = 1
-- => +I[1, true]
-- query batch
SELECT user_id, visit_bitmap = x'3A30000001000000000001001000000001000200' FROM user_visits WHERE user_id = 2
-- => +I[2, true]
-- [quick]
-- query batch
SELECT * FROM test_bool_and WHERE id = 1
-- => +I[1, false]
-- query batch
SELECT * FROM test_bool_and WHERE id = 2
-- => +I[2, true]
-- query batch
SELECT * FROM test_bool_or WHERE id = 1
-- => +I[1, true]
-- query batch
SELECT * FROM test_bool_or WHERE id = 2
-- => +I[2, false]
-- [quick]
-- query batch
SELECT * FROM agg_del_ignore WHERE id = 1
-- => +I[1, 10]
-- query batch
SELECT * FROM agg_del_ignore WHERE id = 2
-- => +I[2, 20]
-- [quick]
-- query batch
SELECT * FROM agg_del_allow WHERE id = 1
-- [quick]
-- query batch
SELECT * FROM agg_del_allow WHERE id = 2
-- => +I[2, 20]
-- [quick]
-- query batch
SELECT * FROM agg_del_partial WHERE id = 1
-- => +I[1, null, 100]
-- [quick]
-- query batch
SELECT * FROM agg_del_partial WHERE id = 3
-- query batch
SELECT * FROM agg_del_partial WHERE id = 4
-- => +I[4, 7, null]
-- query batch
SELECT * FROM agg_del_partial WHERE id = 5
-- => +I[5, 2, null]
