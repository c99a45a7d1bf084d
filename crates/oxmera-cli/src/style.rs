//! Colour for terminal output, and the decision whether to use it.
//!
//! Colour is on only when stdout is a terminal and `NO_COLOR` is unset or
//! empty (<https://no-color.org>), so piped output and logs stay plain.

use std::io::IsTerminal;

/// Paints text with ANSI colours, or leaves it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    /// Whether colour codes are written.
    pub color: bool,
}

impl Paint {
    /// The choice for this process's stdout.
    pub fn for_stdout() -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Paint {
            color: std::io::stdout().is_terminal() && !no_color,
        }
    }

    fn wrap(self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Success.
    pub fn green(self, s: &str) -> String {
        self.wrap("32", s)
    }

    /// Failure.
    pub fn red(self, s: &str) -> String {
        self.wrap("31", s)
    }

    /// Attention, not failure.
    pub fn yellow(self, s: &str) -> String {
        self.wrap("33", s)
    }

    /// Commands to type.
    pub fn cyan(self, s: &str) -> String {
        self.wrap("36", s)
    }

    /// Headings.
    pub fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }

    /// Secondary detail.
    pub fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
}

/// Pads `s` with spaces to `width` characters (not bytes: the ladder's
/// text has arrows and bars in it).
pub fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - n))
    }
}

/// Splits `text` into lines of at most `width` characters at spaces (a
/// single longer word gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("toolongword x", 4), vec!["toolongword", "x"]);
        assert_eq!(wrap("", 4), vec![""]);
    }

    #[test]
    fn pads_by_characters() {
        assert_eq!(pad("▶", 3), "▶  ");
        assert_eq!(pad("long", 2), "long");
    }

    #[test]
    fn paints_only_when_asked() {
        assert_eq!(Paint { color: false }.green("ok"), "ok");
        assert_eq!(Paint { color: true }.green("ok"), "\x1b[32mok\x1b[0m");
    }
}
