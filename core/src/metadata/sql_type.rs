//! Parsing Fluss SQL type text (`BIGINT NOT NULL`, `DECIMAL(10, 2)`, `ARRAY<STRING>`,
//! `ROW<a INT, b STRING>`) and column lists (`id BIGINT NOT NULL, name STRING`).
//!
//! This is the inverse of [`DataType`]'s `Display`, so the CLI, the C ABI and any binding that
//! takes a schema as text share one grammar. Names are case-insensitive; the aliases Fluss's SQL
//! accepts (`INTEGER`, `VARCHAR`/`STRING`, `VARBINARY`/`BYTES`, `TIMESTAMP WITH LOCAL TIME ZONE`)
//! are accepted too.

use crate::error::{Error, Result};
use crate::metadata::datatype::{DataField, DataType};
use crate::metadata::schema::Column;

/// Parses one type, e.g. `DECIMAL(10, 2) NOT NULL`.
pub fn parse_data_type(text: &str) -> Result<DataType> {
    let mut p = Parser::new(text);
    let t = p.data_type()?;
    p.skip_ws();
    if !p.at_end() {
        return Err(p.error("unexpected text after the type"));
    }
    Ok(t)
}

/// Parses a column list, e.g. `id BIGINT NOT NULL, name STRING, dt STRING`.
///
/// Column ids are assigned in order from 0.
pub fn parse_columns(text: &str) -> Result<Vec<Column>> {
    let mut p = Parser::new(text);
    let mut columns = Vec::new();
    loop {
        p.skip_ws();
        if p.at_end() {
            break;
        }
        let name = p.identifier()?;
        let data_type = p.data_type()?;
        let mut column = Column::new(name, data_type);
        column.id = columns.len() as i32;
        columns.push(column);
        p.skip_ws();
        if !p.eat(',') {
            break;
        }
    }
    p.skip_ws();
    if !p.at_end() {
        return Err(p.error("expected ',' between columns"));
    }
    if columns.is_empty() {
        return Err(Error::invalid(format!(
            "no columns in '{text}': expected e.g. 'id BIGINT NOT NULL, name STRING'"
        )));
    }
    Ok(columns)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser { text, pos: 0 }
    }

    fn error(&self, what: &str) -> Error {
        Error::invalid(format!(
            "invalid type text '{}' at position {}: {what}",
            self.text, self.pos
        ))
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{c}'")))
        }
    }

    /// A bare word ([A-Za-z0-9_]+) or a back-quoted identifier.
    fn identifier(&mut self) -> Result<String> {
        self.skip_ws();
        if self.rest().starts_with('`') {
            let body = &self.rest()[1..];
            let mut out = String::new();
            let mut chars = body.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c == '`' {
                    if matches!(chars.peek(), Some((_, '`'))) {
                        chars.next();
                        out.push('`');
                        continue;
                    }
                    self.pos += 1 + i + 1;
                    return Ok(out);
                }
                out.push(c);
            }
            return Err(self.error("unclosed back-quoted identifier"));
        }
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.error("expected a name"));
        }
        let word = self.rest()[..len].to_string();
        self.pos += len;
        Ok(word)
    }

    /// The next word upper-cased, without consuming it.
    fn peek_word(&self) -> String {
        let rest = self.rest().trim_start();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        rest[..len].to_ascii_uppercase()
    }

    fn keyword(&mut self, word: &str) -> bool {
        if self.peek_word() == word {
            self.skip_ws();
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Result<u32> {
        self.skip_ws();
        let len = self
            .rest()
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.error("expected a number"));
        }
        let n = self.rest()[..len]
            .parse()
            .map_err(|_| self.error("number out of range"))?;
        self.pos += len;
        Ok(n)
    }

    /// `(n)` if present.
    fn optional_arg(&mut self) -> Result<Option<u32>> {
        if self.eat('(') {
            let n = self.number()?;
            self.expect(')')?;
            Ok(Some(n))
        } else {
            Ok(None)
        }
    }

    fn data_type(&mut self) -> Result<DataType> {
        self.skip_ws();
        let start = self.pos;
        let word = self.identifier()?.to_ascii_uppercase();
        let t = match word.as_str() {
            "BOOLEAN" | "BOOL" => DataType::boolean(),
            "TINYINT" => DataType::tinyint(),
            "SMALLINT" => DataType::smallint(),
            "INT" | "INTEGER" => DataType::int(),
            "BIGINT" => DataType::bigint(),
            "FLOAT" => DataType::float(),
            "DOUBLE" => {
                self.keyword("PRECISION");
                DataType::double()
            }
            "DECIMAL" | "DEC" | "NUMERIC" => {
                let (precision, scale) = if self.eat('(') {
                    let p = self.number()?;
                    let s = if self.eat(',') { self.number()? } else { 0 };
                    self.expect(')')?;
                    (p, s)
                } else {
                    (10, 0)
                };
                DataType::decimal(precision, scale)
            }
            "CHAR" => DataType::char(self.optional_arg()?.unwrap_or(1)),
            "STRING" => DataType::string(),
            "VARCHAR" => {
                self.optional_arg()?;
                DataType::string()
            }
            "BINARY" => DataType::binary(self.optional_arg()?.unwrap_or(1)),
            "BYTES" => DataType::bytes(),
            "VARBINARY" => {
                self.optional_arg()?;
                DataType::bytes()
            }
            "DATE" => DataType::date(),
            "TIME" => {
                let p = self.optional_arg()?.unwrap_or(0);
                if self.keyword("WITHOUT") {
                    self.time_zone_words()?;
                }
                DataType::time(p)
            }
            "TIMESTAMP" => {
                let p = self.optional_arg()?.unwrap_or(6);
                if self.keyword("WITH") {
                    if !self.keyword("LOCAL") {
                        return Err(self.error("only TIMESTAMP WITH LOCAL TIME ZONE is supported"));
                    }
                    self.time_zone_words()?;
                    DataType::timestamp_ltz(p)
                } else {
                    if self.keyword("WITHOUT") {
                        self.time_zone_words()?;
                    }
                    DataType::timestamp(p)
                }
            }
            "TIMESTAMP_LTZ" => DataType::timestamp_ltz(self.optional_arg()?.unwrap_or(6)),
            "ARRAY" => {
                self.expect('<')?;
                let element = self.data_type()?;
                self.expect('>')?;
                DataType::array(element)
            }
            "MAP" => {
                self.expect('<')?;
                let key = self.data_type()?;
                self.expect(',')?;
                let value = self.data_type()?;
                self.expect('>')?;
                DataType::map(key, value)
            }
            "ROW" => {
                self.expect('<')?;
                let mut fields = Vec::new();
                loop {
                    let name = self.identifier()?;
                    let data_type = self.data_type()?;
                    fields.push(DataField::new(name, data_type).with_id(fields.len() as i32));
                    if !self.eat(',') {
                        break;
                    }
                }
                self.expect('>')?;
                DataType::row(fields)
            }
            _ => {
                self.pos = start;
                return Err(self.error(&format!(
                    "unknown type '{word}' (expected BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, \
                     DOUBLE, DECIMAL(p,s), CHAR(n), STRING, BINARY(n), BYTES, DATE, TIME(p), \
                     TIMESTAMP(p), TIMESTAMP_LTZ(p), ARRAY<..>, MAP<..,..> or ROW<..>)"
                )));
            }
        };
        let t = if self.keyword("NOT") {
            if !self.keyword("NULL") {
                return Err(self.error("expected NULL after NOT"));
            }
            t.not_null()
        } else {
            self.keyword("NULL");
            t
        };
        t.validate()
            .map_err(|e| e.context(format!("type '{}'", self.text)))?;
        Ok(t)
    }

    /// `TIME ZONE` after WITH LOCAL / WITHOUT.
    fn time_zone_words(&mut self) -> Result<()> {
        if self.keyword("TIME") && self.keyword("ZONE") {
            Ok(())
        } else {
            Err(self.error("expected TIME ZONE"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_text_parses_back_to_the_same_type() {
        let types = vec![
            DataType::boolean(),
            DataType::tinyint().not_null(),
            DataType::smallint(),
            DataType::int(),
            DataType::bigint().not_null(),
            DataType::float(),
            DataType::double(),
            DataType::decimal(10, 2),
            DataType::char(5),
            DataType::string(),
            DataType::binary(16),
            DataType::bytes(),
            DataType::date(),
            DataType::time(3),
            DataType::timestamp(6),
            DataType::timestamp_ltz(3),
            DataType::array(DataType::int().not_null()),
            DataType::map(DataType::string().not_null(), DataType::bigint()),
            DataType::row(vec![
                DataField::new("a", DataType::int()).with_id(0),
                DataField::new("b", DataType::string()).with_id(1),
            ]),
        ];
        for t in types {
            let text = t.to_string();
            assert_eq!(parse_data_type(&text).unwrap(), t, "{text}");
        }
    }

    #[test]
    fn aliases_and_sql_spellings() {
        assert_eq!(parse_data_type("integer").unwrap(), DataType::int());
        assert_eq!(parse_data_type("VARCHAR(20)").unwrap(), DataType::string());
        assert_eq!(
            parse_data_type("TIMESTAMP(3) WITH LOCAL TIME ZONE").unwrap(),
            DataType::timestamp_ltz(3)
        );
        assert_eq!(
            parse_data_type("decimal(12)").unwrap(),
            DataType::decimal(12, 0)
        );
    }

    #[test]
    fn column_lists() {
        let cols = parse_columns("order_id BIGINT NOT NULL, `item id` STRING, dt STRING").unwrap();
        let names: Vec<_> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["order_id", "item id", "dt"]);
        assert!(!cols[0].data_type.nullable);
        assert_eq!(cols[2].id, 2);
    }

    #[test]
    fn errors_name_the_text() {
        let e = parse_data_type("BIGINTEGER").unwrap_err();
        assert!(e.message().contains("unknown type 'BIGINTEGER'"), "{e}");
        assert!(parse_data_type("DECIMAL(50, 2)").is_err());
        assert!(parse_data_type("ARRAY<INT").is_err());
        assert!(parse_columns("").is_err());
        assert!(parse_columns("a INT b STRING").is_err());
        assert!(parse_data_type("INT NOT").is_err());
    }
}
