-- The statements both connectors run (tests/flink-compare/compare.sh): the create / insert /
-- select / lookup join / changelog / DELETE / UPDATE statements of Fluss's Flink pages, on a
-- log table and a primary-key table. Directives: see StatementRunner.
-- exec batch
CREATE TABLE log_orders (order_id BIGINT, item STRING, amount INT) WITH ('bucket.num' = '2')
-- exec batch
CREATE TABLE pk_users (id BIGINT, name STRING, city STRING, PRIMARY KEY (id) NOT ENFORCED)
WITH ('bucket.num' = '2')
-- exec batch
INSERT INTO log_orders VALUES (CAST(1 AS BIGINT), 'a', 10), (CAST(2 AS BIGINT), 'b', 20),
  (CAST(3 AS BIGINT), 'c', 30), (CAST(4 AS BIGINT), 'a', 40)
-- exec batch
INSERT INTO pk_users VALUES (CAST(1 AS BIGINT), 'ann', 'paris'), (CAST(2 AS BIGINT), 'bob', 'rome'),
  (CAST(3 AS BIGINT), 'cid', 'oslo')
-- exec batch
INSERT INTO pk_users VALUES (CAST(2 AS BIGINT), 'bob', 'berlin')
-- query batch
SELECT * FROM log_orders
-- query batch
SELECT * FROM pk_users
-- query batch
SELECT COUNT(*) FROM (SELECT * FROM log_orders LIMIT 2)
-- query batch
SELECT COUNT(*) FROM log_orders
-- query batch
SELECT COUNT(*) FROM pk_users
-- query batch
SELECT * FROM pk_users WHERE id = 2
-- query batch
SELECT order_id, amount FROM log_orders WHERE amount > 15
-- query stream 4
SELECT * FROM log_orders /*+ OPTIONS('scan.startup.mode' = 'earliest') */
-- query stream 3
SELECT * FROM pk_users /*+ OPTIONS('scan.startup.mode' = 'full') */
-- query stream 5
SELECT _change_type, id, name, city FROM `pk_users$changelog`
-- exec stream
CREATE TEMPORARY TABLE probe (id BIGINT, proc AS PROCTIME()) WITH ('connector' = 'datagen',
  'number-of-rows' = '4', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
  'fields.id.end' = '4')
-- query stream 4
SELECT p.id, u.name, u.city FROM probe AS p
LEFT JOIN pk_users FOR SYSTEM_TIME AS OF p.proc AS u ON p.id = u.id
-- exec batch
DELETE FROM pk_users WHERE id = 3
-- exec batch
UPDATE pk_users SET name = 'ann2' WHERE id = 1
-- query batch
SELECT * FROM pk_users WHERE id = 1
-- query batch
SELECT * FROM pk_users WHERE id = 3
-- exec batch
DELETE FROM pk_users WHERE city = 'berlin'
-- exec batch
UPDATE pk_users SET name = 'x' WHERE city = 'paris'
-- query batch
SELECT * FROM pk_users WHERE id = 2
-- query batch
SELECT * FROM pk_users WHERE id = 1
