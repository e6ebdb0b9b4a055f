-- The reads Fluss's own Flink connector (fluss-flink-1.20 0.9.1) makes of the tables
-- lake_check.py wrote, in batch mode (run by tests/flink-compare's StatementRunner from
-- tests/fluss-cluster/run-fluss-tiered-lake.sh; lake_check.py check compares them).
-- query batch
SELECT * FROM logs
-- query batch
SELECT * FROM `logs$lake`
-- query batch
SELECT * FROM pk
-- query batch
SELECT * FROM `pk$lake`
