//! Every corpus case is caught the way `corpus/expected.toml` says.

use oxmera_kernel::analysis::{CheckOptions, check};
use oxmera_kernel::corpus;
use oxmera_kernel::sim::SimError;

#[test]
fn the_corpus_has_at_least_twenty_broken_kernels_all_named_in_the_expectations() {
    let cases = corpus::cases();
    let entries = corpus::entries();
    let mut broken_kernels = 0;
    for e in &entries {
        let own: Vec<_> = cases.iter().filter(|c| c.kernel == e.name).collect();
        assert!(!own.is_empty(), "{} has no expectation", e.name);
        let broken = own.iter().any(|c| !c.expect.iter().any(|x| x == "clean"));
        if broken {
            broken_kernels += 1;
            continue;
        }
        // A clean twin (a correct kernel beside a buggy one, to show the
        // tools raise no false alarm): clean at every launch it names, its
        // summary says so, and it runs to the end in the simulator.
        assert!(e.summary.contains("(clean)"), "{}: {}", e.name, e.summary);
        for c in own {
            let run = corpus::simulate_on(&c.kernel, c.launch, c.target(), 1).unwrap();
            assert!(run.is_ok(), "{} at {}: {run:?}", c.kernel, c.launch);
        }
    }
    assert!(broken_kernels >= 20, "{broken_kernels} broken kernels");
}

#[test]
fn every_case_gets_its_expected_verdict() {
    for c in corpus::cases() {
        let e = corpus::entries()
            .into_iter()
            .find(|e| e.name == c.kernel)
            .unwrap_or_else(|| panic!("{}", c.kernel));
        let k = (e.kernel)();
        let opts = CheckOptions::new(c.launch).on(c.target());
        let findings = check(k, &opts).unwrap();
        for want in &c.expect {
            if want == "clean" {
                assert!(
                    findings.is_empty(),
                    "{} at {}: expected clean, got {findings:#?}",
                    c.kernel,
                    c.launch
                );
            } else if let Some(kind) = want.strip_prefix("sim:") {
                match corpus::simulate_on(&c.kernel, c.launch, c.target(), 1).unwrap() {
                    Err(SimError::Report(r)) => {
                        assert_eq!(r.kind_name(), kind, "{} at {}: {r:?}", c.kernel, c.launch);
                        let text = oxmera_kernel::sim::render_report(k, &r);
                        assert!(text.contains(&format!("block {}", r.block)), "{text}");
                        assert!(k.span(r.span).line > 0, "{text}");
                    }
                    other => panic!(
                        "{} at {}: expected sim:{kind}, got {other:?}",
                        c.kernel, c.launch
                    ),
                }
            } else {
                assert!(
                    findings.iter().any(|f| f.rule.code() == want),
                    "{} at {}: expected {want}, got {findings:#?}",
                    c.kernel,
                    c.launch
                );
            }
        }
    }
}

#[test]
fn malformed_expectations_are_rejected_with_the_line() {
    let e = corpus::parse("[[case]]\nkernel = \"x\"\nbogus = 1\n").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(corpus::parse("block = 3").is_err());
}
