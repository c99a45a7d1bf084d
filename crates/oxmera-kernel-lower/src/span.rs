//! Where a kernel's tokens are: the span table the lowering builds beside
//! the IR, and the readable snippet of each span.
//!
//! Two front doors read it differently. Inside `#[kernel]` the spans are the
//! compiler's and the generated code turns them into `line!()`/`column!()`
//! at build time; from a file ([`crate::file`]) they are proc-macro2's own,
//! which know their line and column because this crate turns on its
//! `span-locations` feature.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;

/// Where a span id points in the user's source.
pub struct SpanInfo {
    /// First token.
    pub first: Span,
    /// Last token.
    pub last: Span,
    /// Length in characters of the last token.
    pub last_len: u32,
}

impl SpanInfo {
    /// The span as 1-based lines and columns, where the spans carry their
    /// positions (parsed from text, not inside a compiler macro expansion);
    /// `None` for a span with no position.
    pub fn position(&self) -> Option<oxmera_kernel_ir::ir::SourceSpan> {
        let (a, b) = (self.first.start(), self.last.start());
        if a.line == 0 {
            return None;
        }
        Some(oxmera_kernel_ir::ir::SourceSpan {
            line: a.line as u32,
            column: a.column as u32 + 1,
            end_line: b.line as u32,
            end_column: b.column as u32 + 1 + self.last_len,
        })
    }
}

/// A lowering error: the message and its hint in one line, at `node`.
pub(crate) fn err<T: ToTokens>(node: T, msg: &str, hint: &str) -> syn::Error {
    syn::Error::new_spanned(node, format!("{msg}; hint: {hint}"))
}

/// The first and last token of `ts`, and the width of the last, so a span
/// can be underlined from its first character to its last.
pub(crate) fn first_last(ts: TokenStream) -> Option<(Span, Span, u32)> {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let first = toks.first()?.span();
    let (last, len) = match toks.last()? {
        // A one-line group is measured whole. A span that ends in a
        // multi-line block (`if i < n { .. }`) ends at the block's opening
        // brace, so it underlines the construct's header line. That is also
        // the only end both front doors can name: inside the compiler a
        // group re-printed by syn knows its whole extent but not where its
        // closing brace is.
        TokenTree::Group(g) => match g.span().source_text() {
            Some(t) if !t.contains('\n') => (g.span(), t.chars().count() as u32),
            _ => (g.span_open(), 1),
        },
        t => (t.span(), t.to_string().chars().count() as u32),
    };
    Some((first, last, len))
}

/// A readable snippet from tokens (exact text is restored at run time).
pub(crate) fn token_text(ts: TokenStream) -> String {
    // The compiler wraps long token streams over lines and proc-macro2 does
    // not: one space between tokens either way.
    let s = ts
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = out.chars().last().unwrap_or(' ');
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            let glue_next = matches!(next, '(' | '[' | ')' | ']' | '.' | ',' | ';' | ':')
                && (prev.is_alphanumeric()
                    || prev == '_'
                    || matches!(prev, ')' | ']' | '>' | '(' | '['));
            let glue_prev =
                matches!(prev, '(' | '[' | '.' | '!' | ':') || (prev == '-' && out.len() == 1);
            if glue_next && next != ':' || glue_prev && prev != ':' {
                continue;
            }
            if next == ':' && chars.get(i + 2) == Some(&':') || prev == ':' && out.ends_with("::") {
                continue;
            }
        }
        out.push(c);
    }
    out
}
