//! Colour for terminal output, and the decision whether to use it.
//!
//! Both come from the crates clap already builds on, so nothing extra is
//! compiled: the styles are [`anstyle`] values (no escape code is written
//! by hand here), and whether to use them is [`anstream`]'s decision for
//! stdout: colour only when stdout is a terminal whose `TERM` is not
//! `dumb`, and never when `NO_COLOR` is set (<https://no-color.org>);
//! `CLICOLOR=0` turns it off too and `CLICOLOR_FORCE=1` turns it on for a
//! pipe (<https://bixense.com/clicolors/>). Piped output and logs stay
//! plain.
//!
//! The commands that paint also print through `anstream`'s `print!` and
//! `println!`, which strip any escape code (cargo's coloured diagnostics
//! included) from a stream that does not take colour, so the decision
//! holds even for text that was coloured somewhere else.

use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Style};

/// Paints text with terminal colours, or leaves it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    /// Whether colour codes are written.
    pub color: bool,
}

const GREEN: Style = AnsiColor::Green.on_default();
const RED: Style = AnsiColor::Red.on_default();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const CYAN: Style = AnsiColor::Cyan.on_default();
const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();

impl Paint {
    /// The choice for this process's stdout, as `anstream` makes it.
    pub fn for_stdout() -> Paint {
        Paint {
            color: AutoStream::choice(&std::io::stdout()) != ColorChoice::Never,
        }
    }

    fn wrap(self, style: Style, s: &str) -> String {
        if self.color {
            // `{style}` opens the style and `{style:#}` resets it.
            format!("{style}{s}{style:#}")
        } else {
            s.to_string()
        }
    }

    /// Success.
    pub fn green(self, s: &str) -> String {
        self.wrap(GREEN, s)
    }

    /// Failure.
    pub fn red(self, s: &str) -> String {
        self.wrap(RED, s)
    }

    /// Attention, not failure.
    pub fn yellow(self, s: &str) -> String {
        self.wrap(YELLOW, s)
    }

    /// Commands to type.
    pub fn cyan(self, s: &str) -> String {
        self.wrap(CYAN, s)
    }

    /// Headings.
    pub fn bold(self, s: &str) -> String {
        self.wrap(BOLD, s)
    }

    /// Secondary detail.
    pub fn dim(self, s: &str) -> String {
        self.wrap(DIM, s)
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
        let off = Paint { color: false };
        for painted in [
            off.green("ok"),
            off.red("ok"),
            off.yellow("ok"),
            off.cyan("ok"),
            off.bold("ok"),
            off.dim("ok"),
        ] {
            assert_eq!(painted, "ok");
        }
        // The same SGR codes the hand-written ones were, so a terminal
        // shows exactly what it showed before.
        let on = Paint { color: true };
        assert_eq!(on.green("ok"), "\x1b[32mok\x1b[0m");
        assert_eq!(on.red("ok"), "\x1b[31mok\x1b[0m");
        assert_eq!(on.yellow("ok"), "\x1b[33mok\x1b[0m");
        assert_eq!(on.cyan("ok"), "\x1b[36mok\x1b[0m");
        assert_eq!(on.bold("ok"), "\x1b[1mok\x1b[0m");
        assert_eq!(on.dim("ok"), "\x1b[2mok\x1b[0m");
    }
}
