//! The kind of change a log record carries (Fluss `ChangeType`), one byte per record on the wire.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// The change a log record represents; the discriminant is Fluss's byte value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ChangeType {
    /// A row appended to a log table ("+A").
    AppendOnly = 0,
    /// A row inserted into a primary-key table ("+I").
    Insert = 1,
    /// The old image of an updated row ("-U").
    UpdateBefore = 2,
    /// The new image of an updated row ("+U").
    UpdateAfter = 3,
    /// A deleted row ("-D").
    Delete = 4,
}

impl ChangeType {
    /// All change types in byte-value order.
    pub const ALL: [ChangeType; 5] = [
        ChangeType::AppendOnly,
        ChangeType::Insert,
        ChangeType::UpdateBefore,
        ChangeType::UpdateAfter,
        ChangeType::Delete,
    ];

    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        self as u8
    }

    /// Decodes a wire byte; anything above 4 is corrupt.
    pub fn from_byte(b: u8) -> Result<Self> {
        ChangeType::ALL
            .get(b as usize)
            .copied()
            .ok_or_else(|| Error::corrupt(format!("unknown change type byte {b}")))
    }

    /// Fluss's short string: "+A", "+I", "-U", "+U", "-D".
    pub fn short_string(self) -> &'static str {
        match self {
            ChangeType::AppendOnly => "+A",
            ChangeType::Insert => "+I",
            ChangeType::UpdateBefore => "-U",
            ChangeType::UpdateAfter => "+U",
            ChangeType::Delete => "-D",
        }
    }

    /// The long lower-case name: append_only, insert, update_before, update_after, delete.
    pub fn name(self) -> &'static str {
        match self {
            ChangeType::AppendOnly => "append_only",
            ChangeType::Insert => "insert",
            ChangeType::UpdateBefore => "update_before",
            ChangeType::UpdateAfter => "update_after",
            ChangeType::Delete => "delete",
        }
    }

    /// Whether the record withdraws a previous row (-U or -D).
    pub fn is_retraction(self) -> bool {
        matches!(self, ChangeType::UpdateBefore | ChangeType::Delete)
    }

    /// Decodes a change-type vector (one byte per record).
    pub fn decode_vector(bytes: &[u8]) -> Result<Vec<ChangeType>> {
        bytes.iter().map(|&b| ChangeType::from_byte(b)).collect()
    }
}

impl fmt::Display for ChangeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_string())
    }
}

impl FromStr for ChangeType {
    type Err = Error;

    /// Accepts the short string ("+U") or the long name, case-insensitively ("UPDATE_AFTER").
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        ChangeType::ALL
            .iter()
            .copied()
            .find(|c| t == c.short_string() || t.eq_ignore_ascii_case(c.name()))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown change type '{s}' (expected +A, +I, -U, +U, -D or append_only, insert, update_before, update_after, delete)"
                ))
            })
    }
}

impl From<ChangeType> for u8 {
    fn from(c: ChangeType) -> u8 {
        c.to_byte()
    }
}

impl TryFrom<u8> for ChangeType {
    type Error = Error;
    fn try_from(b: u8) -> Result<Self> {
        ChangeType::from_byte(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_strings_match_fluss() {
        // Values from fluss-common record/ChangeType.java.
        let expect = [
            (0u8, "+A", "append_only"),
            (1, "+I", "insert"),
            (2, "-U", "update_before"),
            (3, "+U", "update_after"),
            (4, "-D", "delete"),
        ];
        for (b, short, long) in expect {
            let c = ChangeType::from_byte(b).unwrap();
            assert_eq!(c.to_byte(), b);
            assert_eq!(c.short_string(), short);
            assert_eq!(c.name(), long);
            assert_eq!(c.to_string(), short);
            assert_eq!(short.parse::<ChangeType>().unwrap(), c);
            assert_eq!(long.to_uppercase().parse::<ChangeType>().unwrap(), c);
        }
        assert!(ChangeType::from_byte(5).is_err());
        assert!("x".parse::<ChangeType>().is_err());
        assert!(ChangeType::Delete.is_retraction());
        assert!(!ChangeType::Insert.is_retraction());
    }
}
