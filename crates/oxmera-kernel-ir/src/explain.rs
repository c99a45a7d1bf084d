//! Explain pages of the analysis rules, compiled into the crate.

use crate::analysis::Rule;

/// The markdown explain page of a rule.
pub fn page(rule: Rule) -> &'static str {
    match rule {
        Rule::DivergentBarrier => include_str!("explain/OXK001.md"),
        Rule::NonConvergentCollective => include_str!("explain/OXK002.md"),
        Rule::GlobalWriteRace => include_str!("explain/OXK003.md"),
        Rule::SharedOverBudget => include_str!("explain/OXK004.md"),
        Rule::LaunchContract => include_str!("explain/OXK005.md"),
    }
}

/// The explain page of a code such as `OXK001`, if it is a rule's.
pub fn explain(code: &str) -> Option<&'static str> {
    Rule::from_code(code).map(page)
}
