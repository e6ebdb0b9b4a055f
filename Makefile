# The commands of the README: `make demo`, `make test` and `make bench`.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: demo test test-rust lint bench jar

demo:
	$(CARGO) run -q -p riverlet-cli -- demo

test:
	bash tests/run-all.sh

test-rust:
	$(CARGO) test --workspace --all-targets

# The JVM binding's JAR (release native library inside): java/riverlet-java/target/riverlet-java-*.jar
jar:
	mvn -T1 -B -q -f java/pom.xml -DskipTests package

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Benchmarks (benches/run.py, then benches/server_vs_fluss.py: the embedded server against
# Apache Fluss 0.9.1, which starts the tests/fluss-cluster JVMs, so it needs Java 17 and Maven
# Central); both write benches/RESULTS.md. BENCH_ARGS="--rows 1000000" for a short run.
# Its own venv: the test suite's .venv pins other pandas than pyfluss, so it has no pyfluss.
BENCH_VENV ?= .venv-bench
BENCH_PYTHON ?= $(BENCH_VENV)/bin/python
bench:
	@test -x $(BENCH_PYTHON) || python3.11 -m venv $(BENCH_VENV)
	@$(BENCH_PYTHON) -m pip install -q --disable-pip-version-check -r tests/requirements-interop.txt "maturin>=1.16,<2"
	$(BENCH_PYTHON) benches/run.py $(BENCH_ARGS)
	$(BENCH_PYTHON) benches/server_vs_fluss.py $(SERVER_BENCH_ARGS)
