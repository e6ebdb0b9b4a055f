//! The stable smoke pass of the fuzz targets (the libFuzzer runs are `fuzz/run.sh`, nightly):
//! every committed corpus file under `fuzz/corpus/<target>/` plus mutated copies of them and
//! random inputs go through each target body of `fuzz/src/lib.rs`, which must not panic.
//!
//! `RIVERLET_FUZZ_SMOKE_MUTATIONS` sets the mutated inputs per target (default 3000).
//! `cargo test -p riverlet --test fuzz_corpus -- --ignored write_seed_corpus` regenerates the
//! seed corpus from the golden vectors and the codecs.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod bodies;

#[path = "../../fuzz/src/seeds.rs"]
mod seeds;

use std::path::{Path, PathBuf};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target)
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(target))
        .unwrap_or_else(|e| panic!("corpus of {target}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("corpus file"))
        .collect()
}

/// xorshift64*: deterministic, so a failing mutation is reproducible from the seed printed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const INTERESTING: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b'\'', b'(', b')', b' ', b'9', b'-'];

/// A libFuzzer-like mutation: flip, overwrite, insert, delete, duplicate or splice.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => v.insert(at, rng.next() as u8),
            3 if !v.is_empty() => {
                let end = (at + rng.below(16)).min(v.len());
                v.drain(at.min(end)..end);
            }
            4 if !v.is_empty() => {
                let i = at.min(v.len() - 4.min(v.len()));
                let n = 4.min(v.len() - i);
                let word = (rng.next() as u32).to_le_bytes();
                v[i..i + n].copy_from_slice(&word[..n]);
            }
            5 if !other.is_empty() => {
                let from = rng.below(other.len());
                let n = rng.below(other.len() - from) + 1;
                v.splice(at..at, other[from..from + n].iter().copied());
            }
            _ => v.truncate(at),
        }
    }
    v
}

fn mutations() -> usize {
    std::env::var("RIVERLET_FUZZ_SMOKE_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn smoke(target: &str) {
    let body = bodies::TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .map(|(_, f)| *f)
        .expect("target");
    let seeds = corpus(target);
    assert!(!seeds.is_empty(), "{target} has no committed corpus");
    for s in &seeds {
        body(s);
    }
    let mut rng = Rng(0x5eed_0000 ^ target.len() as u64);
    // The server target re-opens a server now and then: fewer, costlier inputs.
    let n = if target == "server_request" {
        mutations() / 3
    } else {
        mutations()
    };
    for i in 0..n {
        let input = if i % 10 == 9 {
            (0..rng.below(64)).map(|_| rng.next() as u8).collect()
        } else {
            let a = &seeds[rng.below(seeds.len())];
            let b = &seeds[rng.below(seeds.len())];
            mutate(&mut rng, a, b)
        };
        body(&input);
    }
}

#[test]
fn rpc_frame() {
    smoke("rpc_frame");
}

#[test]
fn log_batch() {
    smoke("log_batch");
}

#[test]
fn arrow_payload() {
    smoke("arrow_payload");
}

#[test]
fn kv_batch() {
    smoke("kv_batch");
}

#[test]
fn compacted_row() {
    smoke("compacted_row");
}

#[test]
fn indexed_row() {
    smoke("indexed_row");
}

#[test]
fn filter_parse() {
    smoke("filter_parse");
}

#[test]
fn timestamp_text() {
    smoke("timestamp_text");
}

#[test]
fn server_request() {
    smoke("server_request");
}

#[test]
fn every_target_has_a_smoke_test_and_a_corpus() {
    for (name, _) in bodies::TARGETS {
        assert!(corpus_dir(name).is_dir(), "fuzz/corpus/{name} missing");
    }
}

#[test]
#[ignore = "writes fuzz/corpus; run by hand after changing the seeds"]
fn write_seed_corpus() {
    for (target, files) in seeds::all() {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, bytes) in files {
            std::fs::write(dir.join(name), bytes).expect("write seed");
        }
    }
}
