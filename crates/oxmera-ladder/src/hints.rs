//! Hints, revealed one at a time.
//!
//! A rung's `hints.md` holds its hints as `## ` sections, mildest first:
//! the first nudges, the last nearly says it.

use std::path::Path;

use crate::{Error, Ladder, Result};

/// One hint: its `## ` heading and the text under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The heading, without the `## `.
    pub title: String,
    /// The text, trimmed.
    pub body: String,
}

/// Splits hints text into its `## ` sections (anything before the first
/// heading is an introduction for authors and is skipped).
pub fn parse(text: &str) -> Vec<Hint> {
    let mut hints: Vec<Hint> = Vec::new();
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            hints.push(Hint {
                title: title.trim().to_string(),
                body: String::new(),
            });
        } else if let Some(h) = hints.last_mut() {
            h.body.push_str(line);
            h.body.push('\n');
        }
    }
    for h in &mut hints {
        h.body = h.body.trim().to_string();
    }
    hints
}

/// Reads a hints file.
pub fn load(path: &Path) -> Result<Vec<Hint>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    Ok(parse(&text))
}

/// What `oxmera ladder hint ID` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revealed {
    /// The rung's id.
    pub id: String,
    /// The hint's number, from 1.
    pub number: usize,
    /// How many hints the rung has.
    pub total: usize,
    /// The hint (`None` when the rung has none).
    pub hint: Option<Hint>,
    /// Whether every hint had already been revealed, so this one is shown
    /// again.
    pub again: bool,
}

/// Reveals the next hint of a rung and records that it was seen.
pub fn reveal_next(ladder: &mut Ladder, id: &str) -> Result<Revealed> {
    reveal(ladder, id, None)
}

/// Reveals hint `number` (from 1) of a rung, or the next one when `None`,
/// and records how far the learner has read. Jumping ahead counts the
/// hints before it as seen; going back leaves the count as it was.
pub fn reveal(ladder: &mut Ladder, id: &str, number: Option<usize>) -> Result<Revealed> {
    let rung = ladder.manifest.built_rung(id)?.clone();
    let hints = load(&ladder.hints_file(&rung))?;
    // Hints asked for from another terminal count too.
    ladder.progress.reload()?;
    let seen = ladder.progress.hints_seen(&rung.id);
    let total = hints.len();
    if let Some(n) = number {
        if n == 0 || n > total {
            return Err(Error::NoSuchHint {
                id: rung.id,
                number: n,
                total,
            });
        }
        if n > seen {
            ladder.progress.set_hints_seen(&rung.id, n);
            ladder.progress.save()?;
        }
        return Ok(Revealed {
            id: rung.id,
            number: n,
            total,
            hint: hints.into_iter().nth(n - 1),
            again: false,
        });
    }
    if total == 0 {
        return Ok(Revealed {
            id: rung.id,
            number: 0,
            total,
            hint: None,
            again: false,
        });
    }
    let again = seen >= total;
    let number = if again { total } else { seen + 1 };
    if !again {
        ladder.progress.set_hints_seen(&rung.id, number);
        ladder.progress.save()?;
    }
    Ok(Revealed {
        id: rung.id,
        number,
        total,
        hint: hints.into_iter().nth(number - 1),
        again,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sections() {
        let hints =
            parse("# Hints for A1\nintro\n\n## Start small\nOne.\n\nTwo.\n## Then\n\nThree.\n");
        assert_eq!(
            hints,
            vec![
                Hint {
                    title: "Start small".into(),
                    body: "One.\n\nTwo.".into()
                },
                Hint {
                    title: "Then".into(),
                    body: "Three.".into()
                },
            ]
        );
        assert!(parse("no headings").is_empty());
    }
}
