-- flink_session.sh: the tables of the job (run by SqlSubmit before the feeder writes customers).
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${BOOTSTRAP}');
USE CATALOG fluss_catalog;
CREATE DATABASE IF NOT EXISTS `${DB}`;
USE `${DB}`;
-- orders: a log table the feeder appends to while the job runs
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount INT) WITH ('bucket.num' = '3');
-- customers: the primary-key table of the lookup join, written before the job starts
CREATE TABLE customers (customer_id INT, name STRING, PRIMARY KEY (customer_id) NOT ENFORCED)
  WITH ('bucket.num' = '3');
-- the two upsert sinks: one row per order, and per customer the count and sum of its orders
CREATE TABLE enriched (order_id BIGINT, customer_id INT, customer_name STRING, amount INT,
  PRIMARY KEY (order_id) NOT ENFORCED) WITH ('bucket.num' = '3');
CREATE TABLE totals (customer_id INT, customer_name STRING, orders BIGINT, amount BIGINT,
  PRIMARY KEY (customer_id) NOT ENFORCED) WITH ('bucket.num' = '3');
