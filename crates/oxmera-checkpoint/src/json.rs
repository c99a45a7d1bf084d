//! A small JSON reader for safetensors headers, whose cost is bounded by
//! the bytes it reads.
//!
//! A general JSON library builds a tree of every value before the caller
//! sees any of it; for a header of many small entries that tree cost about
//! twenty times the header's size (a 98 MB header took 1.93 GB). The
//! header's grammar is tiny — an object of objects holding strings and
//! arrays of integers — so this reader pulls values one at a time and the
//! caller keeps only what it will use: each string is decoded into an
//! allocation of exactly its decoded length, each integer array into a
//! vector of its integers, and anything else is skipped without being
//! stored. Nesting deeper than [`MAX_DEPTH`] is refused, much as
//! serde_json refuses it, so skipping recurses a bounded number of times.
//!
//! It accepts exactly RFC 8259 JSON (the tests hold it to serde_json on
//! random documents) and reports the byte at which a document stops being
//! JSON.

/// How deep arrays and objects may nest (about serde_json's default limit).
pub(crate) const MAX_DEPTH: usize = 128;

/// Where and why a document is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    /// The byte offset at which reading stopped.
    pub at: usize,
    /// What was expected or found there.
    pub what: &'static str,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// The kinds of JSON value, as the next byte announces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl Kind {
    /// The kind in words, for error messages ("is a number, ...").
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Object => "an object",
            Kind::Array => "an array",
            Kind::String => "a string",
            Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::Null => "null",
        }
    }
}

/// A cursor over one JSON document.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type Result<T> = std::result::Result<T, JsonError>;

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Reader<'a> {
        Reader {
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    fn fail<T>(&self, what: &'static str) -> Result<T> {
        Err(JsonError { at: self.pos, what })
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The kind of the next value, without consuming it.
    pub(crate) fn peek_kind(&mut self) -> Result<Kind> {
        self.skip_whitespace();
        Ok(match self.bytes.get(self.pos) {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b'-' | b'0'..=b'9') => Kind::Number,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            Some(_) => return self.fail("expected a value"),
            None => return self.fail("unexpected end of the header"),
        })
    }

    fn eat(&mut self, byte: u8, what: &'static str) -> Result<()> {
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.fail(what)
        }
    }

    /// Checks that nothing but whitespace follows the document.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.skip_whitespace();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            self.fail("trailing characters after the header's object")
        }
    }

    /// Reads an object, calling `field` with each key; `field` must read
    /// (or skip) the value that follows. Keys are decoded as strings.
    pub(crate) fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, String) -> Result<()>,
    ) -> Result<()> {
        self.eat(b'{', "expected an object")?;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return self.fail("expected a string key");
            }
            let key = self.string()?;
            self.eat(b':', "expected ':' after a key")?;
            field(self, key)?;
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.fail("expected ',' or '}' in an object"),
            }
        }
    }

    /// Reads a string value, decoded into an allocation of exactly its
    /// length.
    pub(crate) fn string(&mut self) -> Result<String> {
        // First pass: find the end and the decoded length, validating the
        // escapes; second pass: decode into a string of that capacity.
        let (start, end, decoded_len) = self.scan_string()?;
        let mut out = String::with_capacity(decoded_len);
        let mut i = start;
        while i < end {
            if self.bytes[i] == b'\\' {
                let (c, width) = self.escape_at(i)?;
                out.push(c);
                i += width;
            } else {
                // Copy the run up to the next escape at once; the input is
                // UTF-8 and escapes are ASCII, so the run is UTF-8 too.
                let run = self.bytes[i..end]
                    .iter()
                    .position(|&b| b == b'\\')
                    .map_or(end, |k| i + k);
                out.push_str(
                    std::str::from_utf8(&self.bytes[i..run]).map_err(|_| JsonError {
                        at: i,
                        what: "a string that is not UTF-8",
                    })?,
                );
                i = run;
            }
        }
        debug_assert_eq!(out.len(), decoded_len);
        Ok(out)
    }

    /// Reads past a string, validating it: the byte range of its contents
    /// (between the quotes) and its decoded length in bytes.
    fn scan_string(&mut self) -> Result<(usize, usize, usize)> {
        self.eat(b'"', "expected a string")?;
        let start = self.pos;
        let mut decoded_len = 0usize;
        loop {
            match self.bytes.get(self.pos) {
                None => return self.fail("unterminated string"),
                Some(b'"') => break,
                Some(b'\\') => {
                    let (c, width) = self.escape_at(self.pos)?;
                    decoded_len += c.len_utf8();
                    self.pos += width;
                }
                Some(&b) if b < 0x20 => return self.fail("control character in a string"),
                Some(_) => {
                    decoded_len += 1;
                    self.pos += 1;
                }
            }
        }
        let end = self.pos;
        self.pos += 1;
        Ok((start, end, decoded_len))
    }

    /// The character an escape at `at` (a backslash) stands for, and how
    /// many bytes the escape spans.
    fn escape_at(&self, at: usize) -> Result<(char, usize)> {
        let bad = |what| Err(JsonError { at, what });
        let simple = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let high = self.hex4(at + 2)?;
                if !(0xD800..0xDC00).contains(&high) {
                    return match char::from_u32(high) {
                        Some(c) => Ok((c, 6)),
                        None => bad("a lone trailing surrogate in a \\u escape"),
                    };
                }
                // A leading surrogate must be followed by a trailing one.
                if self.bytes.get(at + 6..at + 8) != Some(b"\\u") {
                    return bad("a lone leading surrogate in a \\u escape");
                }
                let low = self.hex4(at + 8)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return bad("a lone leading surrogate in a \\u escape");
                }
                let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Ok((char::from_u32(c).expect("a surrogate pair is a scalar"), 12));
            }
            _ => return bad("an invalid escape"),
        };
        Ok((simple, 2))
    }

    fn hex4(&self, at: usize) -> Result<u32> {
        let digits = self.bytes.get(at..at + 4).ok_or(JsonError {
            at,
            what: "a \\u escape with fewer than four hex digits",
        })?;
        digits.iter().try_fold(0u32, |acc, &d| {
            let v = (d as char).to_digit(16).ok_or(JsonError {
                at,
                what: "a \\u escape with a non-hex digit",
            })?;
            Ok(acc * 16 + v)
        })
    }

    /// Reads a number; `Some` when it is a non-negative integer written
    /// without fraction or exponent that fits in a u64 (what safetensors
    /// shapes and offsets must be), `None` for any other valid number.
    pub(crate) fn number(&mut self) -> Result<Option<u64>> {
        self.skip_whitespace();
        let start = self.pos;
        let negative = self.bytes.get(self.pos) == Some(&b'-');
        if negative {
            self.pos += 1;
        }
        let digits = |r: &mut Self| {
            let from = r.pos;
            while let Some(b'0'..=b'9') = r.bytes.get(r.pos) {
                r.pos += 1;
            }
            r.pos - from
        };
        let int_start = self.pos;
        match digits(self) {
            0 => return self.fail("expected a digit"),
            n if n > 1 && self.bytes[int_start] == b'0' => {
                self.pos = int_start;
                return self.fail("a number with a leading zero");
            }
            _ => {}
        }
        let int_end = self.pos;
        let mut integral = !negative;
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return self.fail("expected a digit after '.'");
            }
            integral = false;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return self.fail("expected a digit in an exponent");
            }
            integral = false;
        }
        debug_assert!(self.pos > start);
        if !integral {
            return Ok(None);
        }
        Ok(self.bytes[int_start..int_end]
            .iter()
            .try_fold(0u64, |acc, &d| {
                acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            }))
    }

    /// Reads an array whose elements should all be integers (see
    /// [`Reader::number`]): `Some` with them when they are, `None` when
    /// any element is something else (the rest are still read, to check
    /// the document).
    pub(crate) fn integers(&mut self) -> Result<Option<Vec<u64>>> {
        let mut out = Some(Vec::new());
        self.array(|r| {
            let value = match r.peek_kind()? {
                Kind::Number => r.number()?,
                _ => {
                    r.skip(1)?;
                    None
                }
            };
            match (value, &mut out) {
                (Some(v), Some(list)) => list.push(v),
                (Some(_), None) => {}
                (None, _) => out = None,
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Reads an array, calling `item` for each element; `item` must read
    /// (or skip) it.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.eat(b'[', "expected an array")?;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.fail("expected ',' or ']' in an array"),
            }
        }
    }

    /// Reads and discards one value, returning its kind. `depth` is how
    /// deeply the value is already nested (0 at the top level).
    pub(crate) fn skip(&mut self, depth: usize) -> Result<Kind> {
        let kind = self.peek_kind()?;
        match kind {
            Kind::String => {
                // Validated, not stored.
                self.scan_string()?;
            }
            Kind::Number => {
                self.number()?;
            }
            Kind::Bool | Kind::Null => {
                let word: &[u8] = match self.bytes[self.pos] {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !self.bytes[self.pos..].starts_with(word) {
                    return self.fail("expected true, false or null");
                }
                self.pos += word.len();
            }
            Kind::Array | Kind::Object => {
                if depth + 1 > MAX_DEPTH {
                    return self.fail("nesting deeper than 128 levels");
                }
                if kind == Kind::Object {
                    self.object(|r, _key| r.skip(depth + 1).map(drop))?;
                } else {
                    self.array(|r| r.skip(depth + 1).map(drop))?;
                }
            }
        }
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn skip_all(text: &str) -> Result<Kind> {
        let mut r = Reader::new(text);
        let kind = r.skip(0)?;
        r.finish()?;
        Ok(kind)
    }

    #[test]
    fn strings_decode_every_escape() {
        let mut r = Reader::new(r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 é""#);
        assert_eq!(r.string().unwrap(), "a\"b\\c/d\u{8}\u{c}\n\r\té😀 é");
        for bad in [
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            "\"a\nb\"",
            "\"abc",
        ] {
            assert!(Reader::new(bad).string().is_err(), "{bad}");
            assert!(skip_all(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_are_integers_only_when_plain_and_in_range() {
        let read = |t: &str| Reader::new(t).number();
        assert_eq!(read("0"), Ok(Some(0)));
        assert_eq!(read("18446744073709551615"), Ok(Some(u64::MAX)));
        assert_eq!(read("18446744073709551616"), Ok(None));
        for not_u64 in ["-1", "1.0", "1e3", "2E-1", "-0"] {
            assert_eq!(read(not_u64), Ok(None), "{not_u64}");
        }
        for bad in ["01", "-", "1.", "1e", ".5", "+1"] {
            assert!(skip_all(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(skip_all(&deep(MAX_DEPTH)), Ok(Kind::Array));
        assert!(skip_all(&deep(MAX_DEPTH + 1)).is_err());
        assert!(skip_all(&deep(100_000)).is_err());
    }

    #[test]
    fn integer_arrays() {
        let read = |t: &str| Reader::new(t).integers();
        assert_eq!(read("[]"), Ok(Some(vec![])));
        assert_eq!(read(" [ 1 , 2,3 ] "), Ok(Some(vec![1, 2, 3])));
        assert_eq!(read(r#"[1, "2", [3], 4]"#), Ok(None));
        assert_eq!(read("[1.5]"), Ok(None));
        assert!(read("[1,]").is_err());
        assert!(read("[1 2]").is_err());
    }

    /// A random JSON-ish document: mostly valid, sometimes broken.
    fn document() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("fals".to_string()),
            "-?[0-9]{1,3}(\\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?",
            "\"([a-z ]|\\\\[nt\"\\\\/u]|\\\\u[0-9a-fA-F]{4}|\\\\ud83d\\\\ude00|é){0,6}\"",
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec(("\"[a-z]{0,3}\"", inner), 0..5).prop_map(|v| {
                    let fields: Vec<String> = v.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!("{{ {} }}", fields.join(" , "))
                }),
            ]
        })
    }

    proptest! {
        /// The reader accepts exactly what serde_json accepts, strings
        /// decode to what serde_json decodes, and integers are serde_json's
        /// `as_u64` values.
        #[test]
        fn agrees_with_serde_json(doc in document()) {
            let theirs = serde_json::from_str::<serde_json::Value>(&doc);
            prop_assert_eq!(skip_all(&doc).is_ok(), theirs.is_ok(), "{}", doc);
            if let Ok(value) = theirs {
                match value {
                    serde_json::Value::String(s) => {
                        prop_assert_eq!(Reader::new(&doc).string().unwrap(), s);
                    }
                    serde_json::Value::Number(n) => {
                        prop_assert_eq!(Reader::new(&doc).number().unwrap(), n.as_u64());
                    }
                    serde_json::Value::Array(items) => {
                        let ints: Option<Vec<u64>> =
                            items.iter().map(serde_json::Value::as_u64).collect();
                        prop_assert_eq!(Reader::new(&doc).integers().unwrap(), ints);
                    }
                    _ => {}
                }
            }
        }
    }
}
