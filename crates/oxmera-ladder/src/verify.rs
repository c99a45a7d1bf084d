//! The author's check: every spec is satisfiable and none is vacuous.
//!
//! For every built rung, the spec is built and run twice, in two scratch
//! copies of the exercises workspace: once with the pristine skeleton as
//! `src/lib.rs`, where every test must fail (a test that passes against
//! `todo!()` bodies checks nothing), and once with the solution, where every
//! test must pass (so no spec is impossible or wrong). Skeletons, solutions
//! and specs must be rustfmt-clean and clippy-clean, and the learner's
//! `src/lib.rs` must still be the skeleton, so what a fresh clone hands out
//! is what was verified.
//!
//! Every rung also keeps at least [`MIN_WRONG_SOLUTIONS`] named wrong
//! solutions beside its spec (`wrong/NAME.rs`, each embodying one
//! misconception, said in its first `//!` line). Each is run against the
//! spec like the solution, and must fail it: a wrong solution that passes
//! shows a hole in the spec, which a learner's wrong code would slip
//! through.
//!
//! A rung that needs hardware this machine lacks (tier C's wgpu adapter,
//! tier D's CUDA driver) has specs whose tests exit with
//! [`crate::testlog::NEEDS_HARDWARE_EXIT_CODE`] instead of running. Such a
//! rung is *skipped* ([`RungVerdict::skipped`]): its files, formatting and
//! clippy are still checked and its skeleton must still pass nothing, but
//! it is never counted as passed, and a wrong solution that only the
//! skipped tests would catch is listed as unchecked, not as caught.
//!
//! The learner's files are never touched: the copies live under the shared
//! target directory (`<target>/verify/<hash>/{skeleton,solution}`), at a
//! stable place so that repeated runs reuse every compiled dependency.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::check::Outcome;
use crate::testlog::{CargoBuild, Failure, SpecRun};
use crate::{Cargo, Error, Ladder, Result, Rung};

/// What to check besides the specs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Run rustfmt and clippy on skeletons, solutions and specs.
    pub lint: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions { lint: true }
    }
}

/// One thing wrong with a rung.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A file every built rung must have is missing.
    MissingFile {
        /// The file.
        path: PathBuf,
    },
    /// `src/lib.rs` is not the skeleton: either the author changed one and
    /// not the other, or this is a learner's checkout with work in it.
    SkeletonDrift {
        /// The learner's file.
        work: PathBuf,
        /// The skeleton.
        skeleton: PathBuf,
    },
    /// The skeleton does not compile with its spec.
    SkeletonDoesNotBuild {
        /// The compiler's errors.
        errors: String,
    },
    /// Tests that pass against the skeleton: the spec checks nothing there.
    VacuousSpec {
        /// The tests that passed.
        passed: Vec<String>,
    },
    /// The spec has no tests.
    NoTests,
    /// The solution does not compile with its spec.
    SolutionDoesNotBuild {
        /// The compiler's errors.
        errors: String,
    },
    /// Tests that fail against the solution.
    SolutionFails {
        /// The failures.
        failures: Vec<Failure>,
    },
    /// A file rustfmt would change.
    Unformatted {
        /// The file.
        path: PathBuf,
    },
    /// Fewer than [`MIN_WRONG_SOLUTIONS`] named wrong solutions in the
    /// rung's `wrong/` folder.
    TooFewWrongSolutions {
        /// The folder.
        dir: PathBuf,
        /// How many it holds.
        found: usize,
    },
    /// A named wrong solution passes the whole spec: the spec cannot tell
    /// that misconception from a right answer.
    WrongSolutionPasses {
        /// Its file.
        path: PathBuf,
        /// The misconception it embodies.
        misconception: String,
    },
    /// A named wrong solution does not compile with the spec (it should
    /// be wrong in behaviour, not in its types).
    WrongSolutionDoesNotBuild {
        /// Its file.
        path: PathBuf,
        /// The compiler's errors.
        errors: String,
    },
    /// Clippy warnings (denied) in the skeleton or solution build.
    Clippy {
        /// `"skeleton"` or `"solution"`.
        variant: &'static str,
        /// Clippy's output.
        output: String,
    },
}

impl Problem {
    /// One line saying what is wrong.
    pub fn summary(&self) -> String {
        match self {
            Problem::MissingFile { path } => format!("missing {}", path.display()),
            Problem::SkeletonDrift { work, skeleton } => {
                format!("{} differs from {}", work.display(), skeleton.display())
            }
            Problem::SkeletonDoesNotBuild { .. } => "the skeleton does not compile".into(),
            Problem::VacuousSpec { passed } => format!(
                "vacuous spec: {} test(s) pass against the skeleton: {}",
                passed.len(),
                passed.join(", ")
            ),
            Problem::NoTests => "the spec has no tests".into(),
            Problem::SolutionDoesNotBuild { .. } => "the solution does not compile".into(),
            Problem::SolutionFails { failures } => format!(
                "{} test(s) fail against the solution: {}",
                failures.len(),
                failures
                    .iter()
                    .map(|f| f.test.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Problem::Unformatted { path } => format!("rustfmt would change {}", path.display()),
            Problem::TooFewWrongSolutions { dir, found } => format!(
                "{} holds {found} named wrong solution(s); a rung needs at least {MIN_WRONG_SOLUTIONS}",
                dir.display()
            ),
            Problem::WrongSolutionPasses {
                path,
                misconception,
            } => format!(
                "the wrong solution {} passes every test ({misconception}): the spec has a hole",
                path.display()
            ),
            Problem::WrongSolutionDoesNotBuild { path, .. } => {
                format!("the wrong solution {} does not compile", path.display())
            }
            Problem::Clippy { variant, .. } => format!("clippy warnings in the {variant}"),
        }
    }

    /// The details behind the summary (compiler output, failures), if any.
    pub fn details(&self) -> Option<String> {
        match self {
            Problem::SkeletonDoesNotBuild { errors }
            | Problem::SolutionDoesNotBuild { errors }
            | Problem::WrongSolutionDoesNotBuild { errors, .. } => Some(errors.clone()),
            Problem::SolutionFails { failures } => Some(
                failures
                    .iter()
                    .map(|f| format!("{}: {}", f.test, f.message))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Problem::Clippy { output, .. } => Some(output.clone()),
            _ => None,
        }
    }
}

/// The verdict on one rung.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RungVerdict {
    /// The rung's id.
    pub id: String,
    /// How many tests the spec has (as counted on the solution run).
    pub tests: usize,
    /// Everything wrong; empty when the rung passes.
    pub problems: Vec<Problem>,
    /// The named wrong solutions the spec caught, in file-name order.
    pub caught: Vec<Caught>,
    /// Where the solution's spec run skipped tests for want of hardware
    /// (exit status [`crate::testlog::NEEDS_HARDWARE_EXIT_CODE`]): what the
    /// first skipped test said is missing. The rung is then *skipped*: not
    /// a problem, and never counted as passed.
    pub needs_hardware: Option<String>,
    /// Named wrong solutions that failed no test because the tests that
    /// would catch them were skipped for want of hardware: unchecked here.
    pub unchecked: Vec<WrongSolution>,
}

/// A named wrong solution, kept beside a rung's spec in `wrong/NAME.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongSolution {
    /// Its name: the file's stem (`off_by_one_strides`).
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// The misconception it embodies: the first line of its `//!` comment.
    pub misconception: String,
}

/// A wrong solution the spec caught, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    /// The wrong solution.
    pub wrong: WrongSolution,
    /// The tests it fails, sorted.
    pub failed: Vec<String>,
    /// How many tests the spec has (those skipped for want of hardware
    /// included).
    pub tests: usize,
}

/// A rung needs at least this many named wrong solutions.
pub const MIN_WRONG_SOLUTIONS: usize = 3;

/// The named wrong solutions of `rung`, sorted by name (none when it has
/// no `wrong/` folder).
pub fn wrong_solutions(ladder: &Ladder, rung: &Rung) -> Result<Vec<WrongSolution>> {
    let dir = ladder.wrong_dir(rung);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| Error::io("read", &dir, e))? {
        let path = entry.map_err(|e| Error::io("read", &dir, e))?.path();
        if path.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        let misconception = text
            .lines()
            .find_map(|l| l.strip_prefix("//!"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.push(WrongSolution {
            name,
            path,
            misconception,
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

impl RungVerdict {
    /// Whether the author's check found nothing wrong with the rung. A
    /// rung that [`RungVerdict::skipped`] is ok and yet not passed.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether the rung's spec could not run in full on this machine (it
    /// needs hardware this one lacks): skipped, not passed.
    pub fn skipped(&self) -> bool {
        self.needs_hardware.is_some()
    }

    /// Whether the rung passed the author's check in full: nothing wrong,
    /// and every test ran.
    pub fn passed(&self) -> bool {
        self.ok() && !self.skipped()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Skeleton,
    Solution,
    /// Each rung's `n`-th wrong solution (by name), in one workspace.
    Wrong(usize),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::Skeleton => "skeleton".into(),
            Variant::Solution => "solution".into(),
            Variant::Wrong(n) => format!("wrong{n}"),
        }
    }

    /// The clippy verdict's name; wrong solutions are not linted (they
    /// are wrong on purpose, and short).
    fn linted(self) -> Option<&'static str> {
        match self {
            Variant::Skeleton => Some("skeleton"),
            Variant::Solution => Some("solution"),
            Variant::Wrong(_) => None,
        }
    }
}

/// Whether `exercises/Cargo.lock` is up to date with the rungs'
/// manifests (no lock file counts as current: cargo will write one). A
/// stale lock would make a fresh clone's first `check` rewrite a tracked
/// file, so the author's check asks for it.
pub fn lock_is_current(ladder: &Ladder, cargo: &Cargo) -> Result<bool> {
    if !ladder.root().join("Cargo.lock").exists() {
        return Ok(true);
    }
    let mut cmd = Command::new(cargo.program());
    cmd.args([
        "metadata",
        "--locked",
        "--format-version",
        "1",
        "--manifest-path",
    ])
    .arg(ladder.root().join("Cargo.toml"));
    let out = cargo.run(cmd)?;
    Ok(out.status.success())
}

/// Runs the author's check on every built rung.
pub fn verify(ladder: &Ladder, cargo: &Cargo, options: VerifyOptions) -> Result<Vec<RungVerdict>> {
    let rungs: Vec<&Rung> = ladder.manifest.built().collect();
    let mut verdicts: Vec<RungVerdict> = rungs
        .iter()
        .map(|r| RungVerdict {
            id: r.id.clone(),
            tests: 0,
            problems: files_problems(ladder, r),
            caught: Vec::new(),
            needs_hardware: None,
            unchecked: Vec::new(),
        })
        .collect();
    // Only rungs whose files are all there go on to be built.
    let complete: Vec<(usize, &Rung)> = rungs
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            !verdicts[*i]
                .problems
                .iter()
                .any(|p| matches!(p, Problem::MissingFile { .. }))
        })
        .map(|(i, r)| (i, *r))
        .collect();

    let wrongs: Vec<Vec<WrongSolution>> = complete
        .iter()
        .map(|(_, r)| wrong_solutions(ladder, r))
        .collect::<Result<_>>()?;
    let most_wrong = wrongs.iter().map(Vec::len).max().unwrap_or(0);
    let mut variants = vec![Variant::Skeleton, Variant::Solution];
    variants.extend((0..most_wrong).map(Variant::Wrong));

    let work_root = work_root(ladder, cargo);
    for variant in variants {
        let dir = work_root.join(variant.name());
        // The rungs this variant has a file for, that file, and which
        // wrong solution it is.
        let chosen: Vec<(usize, &Rung, PathBuf, Option<&WrongSolution>)> = complete
            .iter()
            .zip(&wrongs)
            .filter_map(|((i, rung), wrong)| {
                Some(match variant {
                    Variant::Skeleton => (*i, *rung, ladder.skeleton_file(rung), None),
                    Variant::Solution => (*i, *rung, ladder.solution_file(rung), None),
                    Variant::Wrong(n) => {
                        let w = wrong.get(n)?;
                        (*i, *rung, w.path.clone(), Some(w))
                    }
                })
            })
            .collect();
        let files: Vec<(&Rung, &Path)> = chosen
            .iter()
            .map(|(_, r, f, _)| (*r, f.as_path()))
            .collect();
        let packages = scratch_workspace(ladder, &files, variant, &dir)?;
        let manifest = dir.join("Cargo.toml");
        for ((i, rung, _, wrong), (package, has_feature)) in chosen.iter().zip(&packages) {
            // A rung's solution (and a wrong one, which may wrap oxmera
            // too) may need optional dependencies (oxmera's crates)
            // behind a `solution` feature.
            let features: &[&str] = if variant != Variant::Skeleton && *has_feature {
                &[SOLUTION_FEATURE]
            } else {
                &[]
            };
            let run = cargo.test_spec(&manifest, package, features)?;
            let verdict = &mut verdicts[*i];
            if let Some(wrong) = wrong {
                judge_wrong(ladder, wrong, run, verdict);
                continue;
            }
            judge(variant, run, verdict);
            if let (true, Some(linted)) = (options.lint, variant.linted()) {
                let mut cmd = cargo.command("clippy", &manifest);
                cmd.args(["--package", package, "--all-targets"]);
                if !features.is_empty() {
                    cmd.arg("--features").arg(features.join(","));
                }
                cmd.args(["--", "-D", "warnings"]);
                let out = cargo.run(cmd)?;
                if !out.status.success() {
                    let rung_dir = rung.path.as_deref().unwrap_or(Path::new(&rung.id));
                    // With `-D warnings`, every lint is an error diagnostic.
                    let build = CargoBuild::parse(&String::from_utf8_lossy(&out.stdout));
                    let text = build
                        .error_text(&String::from_utf8_lossy(&out.stderr))
                        .replace(
                            &format!("{}/src/lib.rs", rung_dir.display()),
                            &format!("{}/{linted}/lib.rs", rung_dir.display()),
                        );
                    verdict.problems.push(Problem::Clippy {
                        variant: linted,
                        output: text,
                    });
                }
            }
        }
    }
    if options.lint {
        for (i, rung) in &complete {
            verdicts[*i].problems.extend(format_problems(ladder, rung)?);
        }
    }
    Ok(verdicts)
}

/// A wrong solution must fail the spec: at least one test red, none of
/// them stopped by a build error.
fn judge_wrong(ladder: &Ladder, wrong: &WrongSolution, run: SpecRun, verdict: &mut RungVerdict) {
    let path = ladder.show(&wrong.path);
    match run {
        SpecRun::BuildFailed { errors } => verdict
            .problems
            .push(Problem::WrongSolutionDoesNotBuild { path, errors }),
        // Nothing failed because the tests that would have were skipped
        // for want of hardware: not caught, not passing either.
        SpecRun::Ran(log) if log.failed.is_empty() && !log.skipped.is_empty() => {
            verdict.unchecked.push(wrong.clone())
        }
        // No test at all is reported once, from the solution run.
        SpecRun::Ran(log) if log.failed.is_empty() && log.passed.is_empty() => {}
        SpecRun::Ran(log) if log.failed.is_empty() => {
            verdict.problems.push(Problem::WrongSolutionPasses {
                path,
                misconception: wrong.misconception.clone(),
            })
        }
        SpecRun::Ran(log) => verdict.caught.push(Caught {
            wrong: wrong.clone(),
            tests: log.passed.len() + log.failed.len() + log.skipped.len(),
            failed: log.failed.into_iter().map(|f| f.test).collect(),
        }),
    }
}

fn judge(variant: Variant, run: SpecRun, verdict: &mut RungVerdict) {
    match (variant, run) {
        (Variant::Skeleton, SpecRun::BuildFailed { errors }) => verdict
            .problems
            .push(Problem::SkeletonDoesNotBuild { errors }),
        // Every test must fail on the skeleton; "no tests" is reported
        // once, from the solution run.
        (Variant::Skeleton, SpecRun::Ran(log)) => {
            if !log.passed.is_empty() {
                verdict
                    .problems
                    .push(Problem::VacuousSpec { passed: log.passed });
            }
        }
        (Variant::Solution, run) => match Outcome::from_run(run) {
            Outcome::BuildFailed { errors } => verdict
                .problems
                .push(Problem::SolutionDoesNotBuild { errors }),
            Outcome::NoTests => verdict.problems.push(Problem::NoTests),
            Outcome::Green { tests } => verdict.tests = tests,
            Outcome::NeedsHardware { passed, skipped } => {
                verdict.tests = passed + skipped.len();
                verdict.needs_hardware = skipped.first().map(|s| s.reason.clone());
            }
            Outcome::Red { passed, failures } => {
                verdict.tests = passed + failures.len();
                verdict.problems.push(Problem::SolutionFails { failures });
            }
        },
        (Variant::Wrong(_), _) => unreachable!("wrong solutions are judged by judge_wrong"),
    }
}

fn files_problems(ladder: &Ladder, rung: &Rung) -> Vec<Problem> {
    let dir = ladder.rung_dir(rung);
    let mut problems = Vec::new();
    for path in [
        dir.join("Cargo.toml"),
        dir.join("README.md"),
        ladder.hints_file(rung),
        ladder.work_file(rung),
        ladder.skeleton_file(rung),
        ladder.solution_file(rung),
        dir.join("tests"),
    ] {
        if !path.exists() {
            problems.push(Problem::MissingFile {
                path: ladder.show(&path),
            });
        }
    }
    // The oxmera sources a green check points at must be there.
    for source in &rung.source {
        let path = ladder.repo_root().join(source);
        if !path.is_file() {
            problems.push(Problem::MissingFile {
                path: ladder.show(&path),
            });
        }
    }
    let found = wrong_solutions(ladder, rung).map_or(0, |w| w.len());
    if found < MIN_WRONG_SOLUTIONS {
        problems.push(Problem::TooFewWrongSolutions {
            dir: ladder.show(&ladder.wrong_dir(rung)),
            found,
        });
    }
    if problems.is_empty() {
        let work = std::fs::read(ladder.work_file(rung)).ok();
        let skeleton = std::fs::read(ladder.skeleton_file(rung)).ok();
        if work != skeleton {
            problems.push(Problem::SkeletonDrift {
                work: ladder.show(&ladder.work_file(rung)),
                skeleton: ladder.show(&ladder.skeleton_file(rung)),
            });
        }
    }
    problems
}

fn work_root(ladder: &Ladder, cargo: &Cargo) -> PathBuf {
    let mut h = DefaultHasher::new();
    ladder.root().hash(&mut h);
    cargo
        .target_dir()
        .join("verify")
        .join(format!("{:08x}", h.finish() as u32))
}

/// The cargo feature a rung's solution build turns on, when the rung has it.
pub const SOLUTION_FEATURE: &str = "solution";

/// Writes a copy of the exercises workspace holding `rungs`, each with its
/// file (the variant's) as `src/lib.rs`, and returns their package names
/// and whether each has a [`SOLUTION_FEATURE`].
fn scratch_workspace(
    ladder: &Ladder,
    rungs: &[(&Rung, &Path)],
    variant: Variant,
    dir: &Path,
) -> Result<Vec<(String, bool)>> {
    let exercises = ladder.root();
    let tag = dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io("remove", dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;

    // The workspace manifest: the learner's one, with its own members
    // replaced and its relative paths made absolute.
    let ws_path = exercises.join("Cargo.toml");
    let mut ws = read_toml(&ws_path)?;
    let members: Vec<toml::Value> = rungs
        .iter()
        .map(|(r, _)| toml::Value::String(rung_folder(r)))
        .collect();
    if let Some(toml::Value::Table(w)) = ws.get_mut("workspace") {
        w.insert("members".into(), toml::Value::Array(members));
        w.remove("exclude");
        w.remove("default-members");
        if let Some(toml::Value::Table(deps)) = w.get_mut("dependencies") {
            absolutize_deps(deps, exercises);
        }
    }
    write_toml(&dir.join("Cargo.toml"), &ws)?;
    let lock = exercises.join("Cargo.lock");
    if lock.exists() {
        copy(&lock, &dir.join("Cargo.lock"))?;
    }

    let mut packages = Vec::new();
    for (rung, chosen) in rungs {
        let src = ladder.rung_dir(rung);
        let dst = dir.join(rung_folder(rung));
        let mut manifest = read_toml(&src.join("Cargo.toml"))?;
        let package = rename_package(&mut manifest, variant, &tag).ok_or_else(|| Error::Parse {
            path: src.join("Cargo.toml"),
            message: "no [package] name".into(),
        })?;
        for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(toml::Value::Table(deps)) = manifest.get_mut(key) {
                absolutize_deps(deps, &src);
            }
        }
        std::fs::create_dir_all(dst.join("src")).map_err(|e| Error::io("create", &dst, e))?;
        write_toml(&dst.join("Cargo.toml"), &manifest)?;
        copy_tree(&src.join("tests"), &dst.join("tests"))?;
        copy(chosen, &dst.join("src").join("lib.rs"))?;
        let has_feature = manifest
            .get("features")
            .and_then(|f| f.get(SOLUTION_FEATURE))
            .is_some();
        packages.push((package, has_feature));
    }
    Ok(packages)
}

/// Gives the scratch copy its own package name, keeping the library's
/// name. Cargo names build artifacts after a hash of the package name and
/// its path *relative to the workspace root*, so without this the skeleton
/// copy, the solution copy and the learner's crate would overwrite each
/// other's test binaries in the shared target directory.
fn rename_package(manifest: &mut toml::Table, variant: Variant, tag: &str) -> Option<String> {
    let original = manifest.get("package")?.get("name")?.as_str()?.to_string();
    let lib_name = manifest
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| original.replace('-', "_"));
    let renamed = format!("{original}-{}-{tag}", variant.name());
    if let Some(toml::Value::Table(package)) = manifest.get_mut("package") {
        package.insert("name".into(), toml::Value::String(renamed.clone()));
    }
    let lib = manifest
        .entry("lib")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(lib) = lib {
        lib.insert("name".into(), toml::Value::String(lib_name));
    }
    Some(renamed)
}

fn rung_folder(rung: &Rung) -> String {
    rung.path
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| rung.id.clone())
}

fn absolutize_deps(deps: &mut toml::Table, base: &Path) {
    for (_, spec) in deps.iter_mut() {
        if let toml::Value::Table(t) = spec {
            if let Some(toml::Value::String(p)) = t.get_mut("path") {
                let path = Path::new(p.as_str());
                if path.is_relative() {
                    let joined = base.join(path);
                    let abs = joined.canonicalize().unwrap_or(joined);
                    *p = abs.display().to_string();
                }
            }
        }
    }
}

fn read_toml(path: &Path) -> Result<toml::Table> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    toml::from_str(&text).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn write_toml(path: &Path, table: &toml::Table) -> Result<()> {
    let text = toml::to_string(table).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    std::fs::write(path, text).map_err(|e| Error::io("write", path, e))
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| Error::io("copy", from, e))
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io("create", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| Error::io("read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", from, e))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            copy(&path, &target)?;
        }
    }
    Ok(())
}

/// rustfmt's verdict on the rung's skeleton, solution and spec files, in
/// place (`--check` changes nothing).
fn format_problems(ladder: &Ladder, rung: &Rung) -> Result<Vec<Problem>> {
    let mut files = vec![ladder.skeleton_file(rung), ladder.solution_file(rung)];
    files.extend(wrong_solutions(ladder, rung)?.into_iter().map(|w| w.path));
    let tests = ladder.rung_dir(rung).join("tests");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&tests)
        .map_err(|e| Error::io("read", &tests, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    specs.sort();
    files.extend(specs);
    let program = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let mut problems = Vec::new();
    for file in files {
        let status = Command::new(&program)
            .args(["--check", "--edition", "2024"])
            .arg(&file)
            .output()
            .map_err(|source| Error::CargoSpawn {
                program: program.to_string_lossy().into_owned(),
                source,
            })?;
        if !status.status.success() {
            problems.push(Problem::Unformatted {
                path: ladder.show(&file),
            });
        }
    }
    Ok(problems)
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
