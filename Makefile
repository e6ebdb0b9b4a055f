# The two commands of the README: `make demo` and `make test`.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: demo test test-rust lint

demo:
	$(CARGO) run -q -p riverlet-cli -- demo

test:
	bash tests/run-all.sh

test-rust:
	$(CARGO) test --workspace --all-targets

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
