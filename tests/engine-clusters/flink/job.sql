-- flink_session.sh: the streaming job, one statement set: the log table `orders` read from the
-- start, a lookup join on the primary-key table `customers` at processing time, and two upsert
-- sinks into primary-key tables. `totals` counts and sums the orders of each customer: a row
-- read twice after a restart (or lost) changes its counters, which a primary-key table would
-- otherwise hide.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${BOOTSTRAP}');
USE CATALOG fluss_catalog;
USE `${DB}`;
CREATE TEMPORARY VIEW orders_p AS
  SELECT order_id, customer_id, amount, PROCTIME() AS proc FROM orders;
INSERT INTO enriched
  SELECT o.order_id, o.customer_id, c.name, o.amount
  FROM orders_p AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c
    ON o.customer_id = c.customer_id;
INSERT INTO totals
  SELECT c.customer_id, c.name, COUNT(*), CAST(SUM(o.amount) AS BIGINT)
  FROM orders_p AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c
    ON o.customer_id = c.customer_id
  GROUP BY c.customer_id, c.name;
