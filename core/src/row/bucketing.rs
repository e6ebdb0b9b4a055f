//! Bucket assignment of key bytes (bucketing/*BucketingFunction.java).
//!
//! Fluss's own: `bucket = murmurHash(hashUnsafeBytes(key, seed 42)) % numBuckets` where
//! `hashUnsafeBytes` (utils/MurmurHashUtils.java) runs the Murmur3 x86_32 body over the 4-byte
//! little-endian words and then mixes each tail byte, sign-extended, through the same body step
//! (not the standard Murmur3 tail), finishing with `fmix(h ^ len)`; `murmurHash(int)`
//! (utils/MathUtils.java) runs one body step with seed 0, xors 4, applies fmix and takes the
//! absolute value (`i32::MIN` -> 0).
//!
//! Paimon's (PaimonBucketingFunction): `abs(hashUnsafeBytes(key, seed 42) % numBuckets)`, the
//! hash Paimon's `BinaryRow.hashCode` is. Iceberg's (IcebergBucketingFunction, Iceberg's bucket
//! transform): `(murmur3_32(key, seed 0) & i32::MAX) % numBuckets` with the standard Murmur3
//! x86_32 (Guava's `murmur3_32_fixed`: unsigned tail bytes).
//!
//! Which function a table uses, and how its keys are encoded for it, is
//! [`super::lake_key::TableKeys::of`].

use crate::error::{Error, Result};

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;
/// The seed Fluss hashes key bytes with.
pub const FLUSS_SEED: u32 = 42;

fn mix_k1(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix_h1(h: u32, k: u32) -> u32 {
    (h ^ k)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

fn fmix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Fluss's `MurmurHashUtils.hashUnsafeBytes(bytes, seed)`.
pub fn hash_bytes(bytes: &[u8], seed: u32) -> i32 {
    let mut h = seed;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        h = mix_h1(h, mix_k1(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    }
    for &b in words.remainder() {
        h = mix_h1(h, mix_k1(b as i8 as i32 as u32));
    }
    fmix(h ^ bytes.len() as u32) as i32
}

/// Fluss's `MathUtils.murmurHash(int)`: a non-negative mix of one int.
pub fn murmur_int(code: i32) -> i32 {
    let k = mix_k1(code as u32);
    let h = k.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    let h = fmix(h ^ 4) as i32;
    if h == i32::MIN {
        0
    } else {
        h.abs()
    }
}

/// The Fluss (no data lake) bucket of encoded key bytes. Returns 0 when `num_buckets <= 0`
/// (never panics); use [`BucketingFunction::bucketing`] for a checked variant.
pub fn fluss_bucket(key_bytes: &[u8], num_buckets: i32) -> i32 {
    if num_buckets <= 0 {
        return 0;
    }
    murmur_int(hash_bytes(key_bytes, FLUSS_SEED)) % num_buckets
}

/// Paimon's bucket of key bytes (a Paimon `BinaryRow`). Returns 0 when `num_buckets <= 0`
/// (never panics); [`super::lake_key::KeyFormat::bucket`] is the checked variant.
pub fn paimon_bucket(key_bytes: &[u8], num_buckets: i32) -> i32 {
    if num_buckets <= 0 {
        return 0;
    }
    (hash_bytes(key_bytes, FLUSS_SEED) % num_buckets).abs()
}

/// The standard Murmur3 x86_32 hash (Guava's `murmur3_32_fixed`, Iceberg's bucket hash).
pub fn murmur3_32(bytes: &[u8], seed: u32) -> i32 {
    let mut h = seed;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        h = mix_h1(h, mix_k1(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k |= u32::from(b) << (8 * i);
        }
        h ^= mix_k1(k);
    }
    fmix(h ^ bytes.len() as u32) as i32
}

/// Iceberg's bucket of key bytes (the bytes Iceberg's bucket transform hashes). Returns 0 when
/// `num_buckets <= 0` (never panics); [`super::lake_key::KeyFormat::bucket`] is the checked
/// variant.
pub fn iceberg_bucket(key_bytes: &[u8], num_buckets: i32) -> i32 {
    if num_buckets <= 0 {
        return 0;
    }
    (murmur3_32(key_bytes, 0) & i32::MAX) % num_buckets
}

/// Maps encoded bucket-key bytes to a bucket; one implementation per lake format.
pub trait BucketingFunction: Send + Sync {
    /// The bucket of `key_bytes` among `num_buckets` buckets.
    fn bucketing(&self, key_bytes: &[u8], num_buckets: i32) -> Result<i32>;
}

/// Fluss's default bucketing (also used for the LANCE lake format).
#[derive(Debug, Clone, Copy, Default)]
pub struct FlussBucketingFunction;

impl BucketingFunction for FlussBucketingFunction {
    fn bucketing(&self, key_bytes: &[u8], num_buckets: i32) -> Result<i32> {
        if key_bytes.is_empty() {
            return Err(Error::invalid("Assigned key must not be empty!"));
        }
        if num_buckets <= 0 {
            return Err(Error::invalid(format!(
                "number of buckets must be positive, got {num_buckets}"
            )));
        }
        Ok(fluss_bucket(key_bytes, num_buckets))
    }
}

/// Paimon's bucketing (lake format `paimon`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PaimonBucketingFunction;

impl BucketingFunction for PaimonBucketingFunction {
    fn bucketing(&self, key_bytes: &[u8], num_buckets: i32) -> Result<i32> {
        super::lake_key::KeyFormat::Paimon.bucket(key_bytes, num_buckets)
    }
}

/// Iceberg's bucketing (lake format `iceberg`).
#[derive(Debug, Clone, Copy, Default)]
pub struct IcebergBucketingFunction;

impl BucketingFunction for IcebergBucketingFunction {
    fn bucketing(&self, key_bytes: &[u8], num_buckets: i32) -> Result<i32> {
        super::lake_key::KeyFormat::Iceberg.bucket(key_bytes, num_buckets)
    }
}

/// The bucketing function for a table's `table.datalake.format` (None = Fluss's own), by
/// [`super::lake_key::KeyFormat::parse`].
pub fn bucketing_for_lake_format(format: Option<&str>) -> Result<Box<dyn BucketingFunction>> {
    use super::lake_key::KeyFormat;
    Ok(match KeyFormat::parse(format)? {
        KeyFormat::Fluss => Box::new(FlussBucketingFunction),
        KeyFormat::Paimon => Box::new(PaimonBucketingFunction),
        KeyFormat::Iceberg => Box::new(IcebergBucketingFunction),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::DataType;
    use crate::row::{encode_key, Datum};

    /// fluss-common/src/test/java/org/apache/fluss/bucketing/BucketingFunctionTest.java
    /// (testDefaultBucketing), same vectors in fluss-rust crates/fluss/src/bucketing/mod.rs.
    #[test]
    fn golden_default_bucketing() {
        let f = FlussBucketingFunction;
        assert_eq!(f.bucketing(&[0, 10], 7).unwrap(), 1);
        assert_eq!(f.bucketing(&[0, 10, 10, 10], 12).unwrap(), 0);
        assert_eq!(
            f.bucketing(b"2bb87d68-baf9-4e64-90f9-f80910419fa6", 16)
                .unwrap(),
            6
        );
        assert_eq!(
            f.bucketing(b"The quick brown fox jumps over the lazy dog", 8)
                .unwrap(),
            6
        );
        assert!(f.bucketing(&[], 8).is_err());
        assert!(f.bucketing(&[1], 0).is_err());
        assert_eq!(fluss_bucket(&[1], 0), 0);
    }

    /// Buckets of INT, BIGINT and STRING keys. The key bytes are CompactedKeyEncoder output
    /// (varints / length-prefixed UTF-8, checked against CompactedKeyEncoderTest); keys are
    /// chosen so their bytes equal the golden byte strings of BucketingFunctionTest, whose
    /// bucket ids are then golden too. The last (36-char STRING) key has no Java golden: it is
    /// only checked to land in range and to be stable.
    #[test]
    fn buckets_of_int_bigint_and_string_keys() {
        // INT key columns (0, 10, 10, 10) -> [0, 10, 10, 10]: golden bucket 0 of 12.
        let ints = vec![DataType::int(); 4];
        let k = encode_key(
            &ints,
            &[
                Datum::Int(0),
                Datum::Int(10),
                Datum::Int(10),
                Datum::Int(10),
            ],
        )
        .unwrap();
        assert_eq!(k, [0, 10, 10, 10]);
        assert_eq!(fluss_bucket(&k, 12), 0);
        // BIGINT key columns (0, 10) -> [0, 10]: golden bucket 1 of 7.
        let k = encode_key(
            &[DataType::bigint(), DataType::bigint()],
            &[Datum::BigInt(0), Datum::BigInt(10)],
        )
        .unwrap();
        assert_eq!(k, [0, 10]);
        assert_eq!(fluss_bucket(&k, 7), 1);
        // STRING "" then INT 10 -> [0, 10]: golden bucket 1 of 7.
        let k = encode_key(
            &[DataType::string(), DataType::int()],
            &[Datum::from(""), Datum::Int(10)],
        )
        .unwrap();
        assert_eq!(fluss_bucket(&k, 7), 1);
        let k = encode_key(
            &[DataType::string()],
            &[Datum::from("2bb87d68-baf9-4e64-90f9-f80910419fa6")],
        )
        .unwrap();
        assert_eq!(k[0], 36);
        assert_eq!(&k[1..], b"2bb87d68-baf9-4e64-90f9-f80910419fa6");
        for n in 1..64 {
            let b = fluss_bucket(&k, n);
            assert!((0..n).contains(&b));
            assert_eq!(b, fluss_bucket(&k, n));
        }
    }

    #[test]
    fn murmur_int_is_non_negative() {
        for x in [0, 1, -1, i32::MIN, i32::MAX, 42, 123_456_789] {
            assert!(murmur_int(x) >= 0);
        }
    }
}
