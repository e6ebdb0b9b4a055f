# The commands of the README: `make demo`, `make test` and `make bench`.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: demo test test-rust lint bench bench-venv bench-curves jar dist

# Builds only what the demo runs (no lake crates) with the build-time profile `demo`.
demo:
	$(CARGO) run -q -p riverlet-cli --no-default-features --profile demo -- demo

test:
	bash tests/run-all.sh

test-rust:
	$(CARGO) test --workspace --all-targets

# The JVM binding's JAR (release native library inside): java/riverlet-java/target/riverlet-java-*.jar
jar:
	mvn -T1 -B -q -f java/pom.xml -DskipTests package

# Every installable artifact (wheel, JARs, C SDK) into dist/ (packaging/dist.sh says which).
dist:
	bash packaging/dist.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Benchmarks, one after the other, each writing its section of benches/RESULTS.md (benches/README.md
# says what each measures): the Python client against pyfluss (run.py), the embedded server
# against Apache Fluss 0.9.1 (server_vs_fluss.py), the Flight SQL gateway against the direct
# binding (flight/run.py), Spark SQL against Parquet and, given FLUSS_SPARK_JAR (built from
# Fluss's source release, benches/README.md), against Fluss's Spark connector (spark/run.py), and
# the Flink connector against Fluss's on the embedded server and on a 3-server Apache Fluss
# 0.9.1 cluster (flink/run.py); then benches/ratios.py prints every ratio, marking any section this run did not
# write. The Fluss parts start the tests/fluss-cluster JVMs: Java 17 and Maven Central. About
# 45 min on 2 quiet cores plus the release builds. *_BENCH_ARGS pass options to each, e.g.
# BENCH_ARGS="--rows 1000000"; BENCH_ONLY=1 runs run.py and server_vs_fluss.py only (~8 min).
# Its own venv: the test suite's .venv pins other pandas than pyfluss, so it has no pyfluss.
BENCH_VENV ?= .venv-bench
BENCH_PYTHON ?= $(BENCH_VENV)/bin/python
FLUSS_SPARK_JAR ?=
FLINK_BENCH_ARGS ?= --servers riverlet,fluss-3x3 --rows 5000000 --probes 200000 --rounds 1 --warmup-rows 500000
bench-venv:
	@test -x $(BENCH_PYTHON) || python3.11 -m venv $(BENCH_VENV)
	@$(BENCH_PYTHON) -m pip install -q --disable-pip-version-check -r tests/requirements-interop.txt \
	  -r benches/requirements.txt "maturin>=1.16,<2"

bench: bench-venv
	@set -e; since="$$(date '+%Y-%m-%d %H:%M')"; \
	$(BENCH_PYTHON) benches/run.py $(BENCH_ARGS); \
	$(BENCH_PYTHON) benches/server_vs_fluss.py $(SERVER_BENCH_ARGS); \
	if [ -z "$(BENCH_ONLY)" ]; then \
	  $(BENCH_PYTHON) benches/flight/run.py --python $(BENCH_PYTHON) $(FLIGHT_BENCH_ARGS); \
	  python3 benches/spark/run.py $(if $(FLUSS_SPARK_JAR),--fluss-jar $(FLUSS_SPARK_JAR)) $(SPARK_BENCH_ARGS); \
	  python3 benches/flink/run.py $(FLINK_BENCH_ARGS); \
	fi; \
	python3 benches/ratios.py --since "$$since"

# How cost grows, drawn (benches/curves.py): scan, append, time-range, lookup and server memory
# against rows, buckets, columns, window width, table size and data size, Riverlet against
# pyfluss; PNGs and curves.json into benches/curves/, a section of benches/RESULTS.md. About
# 13 min of measuring on a quiet 2-core machine (it prints its estimate first).
# CURVES_ARGS="--quick" for a smoke test (small sizes, written to a temp dir).
bench-curves: bench-venv
	$(BENCH_PYTHON) benches/curves.py $(CURVES_ARGS)

# The documentation site into site/ (pages of docs/, mkdocs.yml; docs/maintainers/docs.md says
# how it is made): mkdocs in its own venv (.venv-docs, tools pinned in docs/requirements.txt),
# then the generated API references copied under site/api/: rustdoc (the same flags as the
# test run's `cargo doc`, so its build is reused) and the Java API's Javadoc.
# docs/check.sh builds it and checks every internal link and anchor.
DOCS_VENV ?= .venv-docs
JAVADOC_PLUGIN ?= org.apache.maven.plugins:maven-javadoc-plugin:3.11.2
.PHONY: docs
docs:
	@test -x $(DOCS_VENV)/bin/python || python3 -m venv $(DOCS_VENV)
	@$(DOCS_VENV)/bin/pip install -q --disable-pip-version-check -r docs/requirements.txt
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps -q
	mvn -B -q -Dstyle.color=never -f java/pom.xml -pl riverlet-java $(JAVADOC_PLUGIN):javadoc \
	  -Driverlet.cargo.skip=true
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build -q
	mkdir -p site/api/rust site/api/java
	cp -r target/doc/. site/api/rust/
	cp docs/tools/rustdoc-index.html site/api/rust/index.html
	cp -r java/riverlet-java/target/reports/apidocs/. site/api/java/
