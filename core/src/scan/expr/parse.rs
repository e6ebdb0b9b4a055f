//! The filter text grammar: the tokenizer and the recursive-descent parser behind
//! [`parse_filter`], and the quoting rules `Display` uses to write text it reads back.

use std::fmt;

use arrow_schema::{DataType as ArrowType, TimeUnit};

use crate::scan::time::{parse_date_time_text, DateTimeText};
use crate::{Error, Result};

use super::eval::parse_temporal_text;
use super::{CompareOp, Expr, Literal};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Word(String),
    Str(String),
    Num(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

fn tokenize(text: &str) -> Result<Vec<(usize, Tok)>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |pos: usize, msg: &str| {
        Error::invalid(format!(
            "cannot parse filter '{text}': {msg} at character {}",
            pos + 1
        ))
    };
    while i < chars.len() {
        let (pos, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match c {
            '(' => {
                out.push((pos, Tok::LParen));
                i += 1;
            }
            ')' => {
                out.push((pos, Tok::RParen));
                i += 1;
            }
            ',' => {
                out.push((pos, Tok::Comma));
                i += 1;
            }
            '=' => {
                i += if chars.get(i + 1).map(|c| c.1) == Some('=') {
                    2
                } else {
                    1
                };
                out.push((pos, Tok::Op("=")));
            }
            '!' => {
                if chars.get(i + 1).map(|c| c.1) == Some('=') {
                    out.push((pos, Tok::Op("!=")));
                    i += 2;
                } else {
                    return Err(err(pos, "expected '!='"));
                }
            }
            '<' | '>' => {
                let next = chars.get(i + 1).map(|c| c.1);
                let op = match (c, next) {
                    ('<', Some('=')) => "<=",
                    ('<', Some('>')) => "!=",
                    ('>', Some('=')) => ">=",
                    ('<', _) => "<",
                    _ => ">",
                };
                // Every two-character spelling ("<=", "<>", ">=") is two characters long.
                i += op.len();
                out.push((pos, Tok::Op(op)));
            }
            '\'' | '`' | '"' => {
                let quote = c;
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(err(pos, "unterminated quoted text")),
                        Some(&(_, ch)) if ch == quote => {
                            if chars.get(i + 1).map(|c| c.1) == Some(quote) {
                                s.push(quote);
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(&(_, ch)) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push((
                    pos,
                    if quote == '\'' {
                        Tok::Str(s)
                    } else {
                        Tok::Ident(s)
                    },
                ));
            }
            c if c.is_ascii_digit() || c == '.' || (c == '-' && starts_number(&chars, i)) => {
                let mut s = String::new();
                s.push(c);
                i += 1;
                while let Some(&(_, ch)) = chars.get(i) {
                    let prev = s.chars().last();
                    if ch.is_ascii_digit()
                        || ch == '.'
                        || ch == 'e'
                        || ch == 'E'
                        || ((ch == '-' || ch == '+') && matches!(prev, Some('e' | 'E')))
                    {
                        s.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push((pos, Tok::Num(s)));
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut s = String::new();
                while let Some(&(_, ch)) = chars.get(i) {
                    if ch.is_alphanumeric() || ch == '_' || ch == '.' {
                        s.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push((pos, Tok::Word(s)));
            }
            _ => return Err(err(pos, &format!("unexpected '{c}'"))),
        }
    }
    Ok(out)
}

fn starts_number(chars: &[(usize, char)], i: usize) -> bool {
    chars
        .get(i + 1)
        .is_some_and(|c| c.1.is_ascii_digit() || c.1 == '.')
}

/// How deeply parentheses and `NOT`s may nest. The parser (and evaluation, display and drop of
/// the tree it builds) recurse once per level, so an unbounded depth would let a filter text
/// like `((((...` overflow the stack and abort the host process.
pub const MAX_FILTER_DEPTH: usize = 128;

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(usize, Tok)>,
    pos: usize,
    /// Current nesting of parentheses and `NOT`s.
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, msg: impl fmt::Display) -> Error {
        let at = match self.toks.get(self.pos) {
            Some((p, _)) => format!("at character {}", p + 1),
            None => "at the end".to_string(),
        };
        Error::invalid(format!("cannot parse filter '{}': {msg} {at}", self.text))
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.1)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.1.clone());
        self.pos += 1;
        t
    }
    fn keyword(&mut self, word: &str) -> bool {
        if let Some(Tok::Word(w)) = self.peek() {
            if w.eq_ignore_ascii_case(word) {
                self.pos += 1;
                return true;
            }
        }
        false
    }
    fn expect_keyword(&mut self, word: &str) -> Result<()> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.err(format!("expected {word}")))
        }
    }
    fn or(&mut self) -> Result<Expr> {
        let mut parts = vec![self.and()?];
        while self.keyword("OR") {
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Expr::Or(vec![]))
        } else {
            Expr::Or(parts)
        })
    }
    fn and(&mut self) -> Result<Expr> {
        let mut parts = vec![self.not()?];
        while self.keyword("AND") {
            parts.push(self.not()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Expr::And(vec![]))
        } else {
            Expr::And(parts)
        })
    }
    /// Runs `inner` one nesting level deeper, failing past [`MAX_FILTER_DEPTH`].
    fn nested<T>(&mut self, inner: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_FILTER_DEPTH {
            return Err(self.err(format!(
                "the filter nests parentheses and NOTs more than {MAX_FILTER_DEPTH} levels deep"
            )));
        }
        self.depth += 1;
        let out = inner(self);
        self.depth -= 1;
        out
    }
    fn not(&mut self) -> Result<Expr> {
        if self.keyword("NOT") {
            return self.nested(|p| Ok(Expr::Not(Box::new(p.not()?))));
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Expr> {
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let e = self.nested(Self::or)?;
            if self.next() != Some(Tok::RParen) {
                self.pos -= 1;
                return Err(self.err("expected ')'"));
            }
            return Ok(e);
        }
        let column = match self.next() {
            Some(Tok::Ident(s)) => s,
            Some(Tok::Word(w)) if !is_keyword(&w) => w,
            _ => {
                self.pos -= 1;
                return Err(self.err("expected a column name"));
            }
        };
        if let Some(Tok::Op(op)) = self.peek().cloned() {
            self.pos += 1;
            let op = CompareOp::parse(op).unwrap_or(CompareOp::GtEq);
            let value = self.literal()?;
            return Ok(Expr::Compare { column, op, value });
        }
        if self.keyword("IS") {
            let negated = self.keyword("NOT");
            self.expect_keyword("NULL")?;
            return Ok(if negated {
                Expr::IsNotNull(column)
            } else {
                Expr::IsNull(column)
            });
        }
        let negated = self.keyword("NOT");
        let e = if self.keyword("IN") {
            if self.next() != Some(Tok::LParen) {
                self.pos -= 1;
                return Err(self.err("expected '(' after IN"));
            }
            let mut values = vec![self.literal()?];
            loop {
                match self.next() {
                    Some(Tok::Comma) => values.push(self.literal()?),
                    Some(Tok::RParen) => break,
                    _ => {
                        self.pos -= 1;
                        return Err(self.err("expected ',' or ')' in the IN list"));
                    }
                }
            }
            if negated {
                return Ok(Expr::NotIn { column, values });
            }
            Expr::In { column, values }
        } else if self.keyword("BETWEEN") {
            let low = self.literal()?;
            self.expect_keyword("AND")?;
            let high = self.literal()?;
            Expr::Between { column, low, high }
        } else if self.keyword("LIKE") {
            match self.next() {
                Some(Tok::Str(pattern)) => Expr::Like { column, pattern },
                _ => {
                    self.pos -= 1;
                    return Err(self.err("expected a quoted pattern after LIKE"));
                }
            }
        } else {
            return Err(self.err(
                "expected a comparison (=, !=, <, <=, >, >=), IN, IS [NOT] NULL, BETWEEN or LIKE",
            ));
        };
        Ok(if negated { Expr::Not(Box::new(e)) } else { e })
    }
    fn literal(&mut self) -> Result<Literal> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(Literal::String(s)),
            Some(Tok::Num(n)) => parse_number(&n).ok_or_else(|| {
                self.pos -= 1;
                self.err(format!("'{n}' is not a number"))
            }),
            Some(Tok::Word(w)) => {
                let upper = w.to_ascii_uppercase();
                match upper.as_str() {
                    "NULL" => Ok(Literal::Null),
                    "TRUE" => Ok(Literal::Boolean(true)),
                    "FALSE" => Ok(Literal::Boolean(false)),
                    "X" => match self.next() {
                        Some(Tok::Str(hex)) => parse_hex(&hex).ok_or_else(|| {
                            self.pos -= 1;
                            self.err(format!("'{hex}' is not hexadecimal"))
                        }),
                        _ => {
                            self.pos -= 1;
                            Err(self.err("expected X'hex'"))
                        }
                    },
                    "DATE" | "TIME" | "TIMESTAMP" | "TIMESTAMP_LTZ" => {
                        let text = match self.next() {
                            Some(Tok::Str(s)) => s,
                            _ => {
                                self.pos -= 1;
                                return Err(self.err(format!("expected {upper} 'text'")));
                            }
                        };
                        let bad = |p: &Self| p.err(format!("'{text}' is not a valid {upper}"));
                        let parsed = match upper.as_str() {
                            "DATE" => match parse_date_time_text(&text) {
                                Some(DateTimeText::Date(d)) => Some(Literal::date(d)),
                                _ => None,
                            },
                            "TIME" => {
                                parse_temporal_text(&text, &ArrowType::Time64(TimeUnit::Nanosecond))
                            }
                            "TIMESTAMP" => match parse_temporal_text(
                                &text,
                                &ArrowType::Timestamp(TimeUnit::Nanosecond, None),
                            ) {
                                Some(Literal::Date(d)) => Some(Literal::Timestamp {
                                    millis: d as i64 * 86_400_000,
                                    nanos_of_milli: 0,
                                }),
                                other => other,
                            },
                            _ => match parse_date_time_text(&text) {
                                Some(DateTimeText::Instant(t)) => Some(Literal::timestamp_ltz(t)),
                                _ => None,
                            },
                        };
                        parsed.ok_or_else(|| bad(self))
                    }
                    _ => {
                        self.pos -= 1;
                        Err(self.err(format!("expected a literal, found '{w}'")))
                    }
                }
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                if self.pos >= self.toks.len() {
                    self.pos = self.toks.len();
                }
                Err(self.err("expected a literal"))
            }
        }
    }
}

fn parse_hex(hex: &str) -> Option<Literal> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some(Literal::Binary(bytes))
}

fn parse_number(n: &str) -> Option<Literal> {
    if n.contains(['e', 'E']) {
        // `1e999` overflows to infinity, which has no literal form to print back.
        return n
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Literal::Float);
    }
    if let Some((int, frac)) = n.split_once('.') {
        if frac.contains('.') || (int.trim_start_matches('-').is_empty() && frac.is_empty()) {
            return None;
        }
        let digits = format!("{int}{frac}");
        let unscaled = if digits == "-" {
            0
        } else {
            digits.parse::<i128>().ok()?
        };
        let scale = i8::try_from(frac.len()).ok()?;
        return Some(Literal::Decimal { unscaled, scale });
    }
    n.parse::<i64>().ok().map(Literal::Int).or_else(|| {
        n.parse::<i128>()
            .ok()
            .map(|unscaled| Literal::Decimal { unscaled, scale: 0 })
    })
}

/// Parses the text form of a filter, e.g. `a = 1 AND (b IN ('x','y') OR c IS NULL)`.
///
/// Grammar: `OR` / `AND` / `NOT` with the usual precedence and parentheses; predicates
/// `col op literal` (`=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`), `col [NOT] IN (lit, ...)`,
/// `col IS [NOT] NULL`, `col [NOT] BETWEEN lit AND lit`, `col [NOT] LIKE 'pattern'`. Literals:
/// integers, decimals (`1.25`, exact), floats (`1e3`), `'strings'` (`''` escapes a quote),
/// `TRUE`/`FALSE`/`NULL`, `X'CAFE'`, `DATE '2024-01-01'`, `TIME '12:00:00'`,
/// `TIMESTAMP '2024-01-01 12:00:00.5'`, `TIMESTAMP_LTZ '2024-01-01T12:00:00+08:00'`. Column
/// names that are not plain identifiers go in backquotes or double quotes. Keywords are
/// case-insensitive.
pub fn parse_filter(text: &str) -> Result<Expr> {
    let toks = tokenize(text)?;
    if toks.is_empty() {
        return Err(Error::invalid("cannot parse filter '': it is empty"));
    }
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(p.err("unexpected text after the filter"));
    }
    Ok(e)
}

/// Parses the text form of an UPDATE's assignments, `col = literal [, col = literal ...]`
/// (e.g. `total_amount = 0, note = 'checked'`), with the literal grammar of [`parse_filter`].
/// Returns the pairs in the order written; checking them against a table is the caller's job.
pub fn parse_assignments(text: &str) -> Result<Vec<(String, Literal)>> {
    let toks = tokenize(text)?;
    if toks.is_empty() {
        return Err(Error::invalid(
            "cannot parse assignments '': they are empty",
        ));
    }
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    loop {
        let column = match p.next() {
            Some(Tok::Ident(s)) => s,
            Some(Tok::Word(w)) if !is_keyword(&w) => w,
            _ => {
                p.pos -= 1;
                return Err(p.err("expected a column name"));
            }
        };
        if p.next() != Some(Tok::Op("=")) {
            p.pos -= 1;
            return Err(p.err(format!("expected '=' after column '{column}'")));
        }
        out.push((column, p.literal()?));
        match p.next() {
            None => return Ok(out),
            Some(Tok::Comma) => {}
            Some(_) => {
                p.pos -= 1;
                return Err(p.err("expected ',' between assignments"));
            }
        }
    }
}

impl std::str::FromStr for Expr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Expr> {
        parse_filter(s)
    }
}

/// A column name as the parser would read it back (quoted when not a plain identifier).
pub(super) fn ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name);
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

pub(super) fn is_keyword(word: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "AND",
        "OR",
        "NOT",
        "IN",
        "IS",
        "NULL",
        "BETWEEN",
        "LIKE",
        "TRUE",
        "FALSE",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "TIMESTAMP_LTZ",
    ];
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}
