//! A manifest and a learner's progress together: what is done, what is
//! current, what comes next.

use std::path::{Path, PathBuf};

use crate::{Error, Manifest, Need, Progress, Result, Rung};

/// Where a rung stands for this learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RungState {
    /// Its spec passed.
    Done,
    /// The first built rung that is not done: the one to work on.
    Current,
    /// Built, but an earlier rung is not done yet.
    Locked,
    /// Not built yet.
    Planned,
    /// Built and not done, but this machine lacks what it needs (a wgpu
    /// adapter, a CUDA driver): its spec would skip, so it is passed over
    /// in the climb rather than made current.
    NeedsHardware,
}

impl RungState {
    /// The word shown to the learner.
    pub fn as_str(self) -> &'static str {
        match self {
            RungState::Done => "done",
            RungState::Current => "current",
            RungState::Locked => "locked",
            RungState::Planned => "planned",
            RungState::NeedsHardware => "needs hardware",
        }
    }
}

/// What the learner should do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// Work on this rung.
    Climb {
        /// The rung's id.
        id: String,
        /// Its README, relative to the repository root.
        readme: PathBuf,
        /// The file to edit, relative to the repository root.
        work: PathBuf,
    },
    /// Every built rung that this machine can run is done; the rungs
    /// `ids` are not, and wait for hardware it lacks (see
    /// [`Ladder::missing_for`]).
    WaitingOnHardware {
        /// The rungs waiting, in climbing order.
        ids: Vec<String>,
    },
    /// Every built rung is done.
    AllDone,
}

/// The ladder of one checkout, with one learner's progress.
#[derive(Debug, Clone)]
pub struct Ladder {
    root: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
    /// The learner's progress.
    pub progress: Progress,
    /// What this machine lacks, as the front end probed it (none unless
    /// told: this crate probes no hardware).
    lacking: Vec<Need>,
}

/// Finds the `exercises/` folder: `$OXMERA_EXERCISES` if set; else the
/// nearest one at or above `start` (so it works from inside a rung too);
/// else `fallback` (the CLI passes the checkout it was built from).
pub fn find_exercises(start: &Path, fallback: Option<&Path>) -> Result<PathBuf> {
    let mut searched = Vec::new();
    if let Some(dir) = std::env::var_os("OXMERA_EXERCISES").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if dir.join("manifest.toml").is_file() {
            return Ok(dir);
        }
        return Err(Error::ExercisesNotFound {
            searched: vec![dir],
        });
    }
    for dir in start.ancestors() {
        let nested = dir.join("exercises");
        if nested.join("manifest.toml").is_file() {
            return Ok(nested);
        }
        if dir.file_name().is_some_and(|n| n == "exercises") && dir.join("manifest.toml").is_file()
        {
            return Ok(dir.to_path_buf());
        }
        searched.push(dir.to_path_buf());
    }
    if let Some(dir) = fallback {
        if dir.join("manifest.toml").is_file() {
            return Ok(dir.to_path_buf());
        }
        searched.push(dir.to_path_buf());
    }
    Err(Error::ExercisesNotFound { searched })
}

impl Ladder {
    /// Opens the ladder in `exercises` with the progress file at its
    /// default place.
    pub fn open(exercises: &Path) -> Result<Ladder> {
        Ladder::open_with_progress(exercises, &Progress::default_path(exercises))
    }

    /// Opens the ladder with progress kept at `progress`.
    pub fn open_with_progress(exercises: &Path, progress: &Path) -> Result<Ladder> {
        let manifest = Manifest::load(&exercises.join("manifest.toml"))?;
        let progress = Progress::load(progress)?;
        Ok(Ladder {
            root: exercises.to_path_buf(),
            manifest,
            progress,
            lacking: Vec::new(),
        })
    }

    /// A ladder from parts (for tests and for rendering fixtures).
    pub fn from_parts(exercises: PathBuf, manifest: Manifest, progress: Progress) -> Ladder {
        Ladder {
            root: exercises,
            manifest,
            progress,
            lacking: Vec::new(),
        }
    }

    /// Tells the ladder what this machine lacks (the front end probes it,
    /// as `oxmera doctor` does): a built rung that needs one of them and is
    /// not done shows as [`RungState::NeedsHardware`] and is never made
    /// current.
    pub fn with_lacking(mut self, lacking: Vec<Need>) -> Ladder {
        self.lacking = lacking;
        self
    }

    /// What this machine lacks, as told by [`Ladder::with_lacking`].
    pub fn lacking(&self) -> &[Need] {
        &self.lacking
    }

    /// The needs of `rung` that this machine lacks.
    pub fn missing_for(&self, rung: &Rung) -> Vec<Need> {
        rung.needs
            .iter()
            .copied()
            .filter(|n| self.lacking.contains(n))
            .collect()
    }

    /// The `exercises/` folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder above `exercises/`: the repository root, from which
    /// paths are shown.
    pub fn repo_root(&self) -> &Path {
        self.root.parent().unwrap_or(&self.root)
    }

    /// `path` relative to the repository root when it is inside it.
    pub fn show(&self, path: &Path) -> PathBuf {
        path.strip_prefix(self.repo_root())
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf())
    }

    /// A built rung's folder.
    pub fn rung_dir(&self, rung: &Rung) -> PathBuf {
        self.root
            .join(rung.path.as_deref().unwrap_or(Path::new(&rung.id)))
    }

    /// The file the learner edits: `src/lib.rs`.
    pub fn work_file(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("src").join("lib.rs")
    }

    /// The pristine skeleton that `reset` restores: `skeleton/lib.rs`.
    pub fn skeleton_file(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("skeleton").join("lib.rs")
    }

    /// The author's solution: `solution/lib.rs`.
    pub fn solution_file(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("solution").join("lib.rs")
    }

    /// The folder of the rung's named wrong solutions: `wrong/`, one
    /// `NAME.rs` per misconception (see [`crate::verify::wrong_solutions`]).
    pub fn wrong_dir(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("wrong")
    }

    /// The rung's hints: `hints.md`.
    pub fn hints_file(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("hints.md")
    }

    /// The rung's README.
    pub fn readme(&self, rung: &Rung) -> PathBuf {
        self.rung_dir(rung).join("README.md")
    }

    /// Every rung with its state, in climbing order.
    pub fn states(&self) -> Vec<(&Rung, RungState)> {
        let mut current_given = false;
        self.manifest
            .rungs
            .iter()
            .map(|r| {
                let state = if !r.is_built() {
                    RungState::Planned
                } else if self.progress.is_done(&r.id) {
                    RungState::Done
                } else if !self.missing_for(r).is_empty() {
                    RungState::NeedsHardware
                } else if !current_given {
                    current_given = true;
                    RungState::Current
                } else {
                    RungState::Locked
                };
                (r, state)
            })
            .collect()
    }

    /// The state of one rung.
    pub fn state(&self, id: &str) -> Option<RungState> {
        self.states()
            .into_iter()
            .find(|(r, _)| r.id == id)
            .map(|(_, s)| s)
    }

    /// The rung to work on, if any is left.
    pub fn current(&self) -> Option<&Rung> {
        self.states()
            .into_iter()
            .find(|(_, s)| *s == RungState::Current)
            .map(|(r, _)| r)
    }

    /// How many built rungs are done, and how many are built.
    pub fn counts(&self) -> (usize, usize) {
        let built: Vec<&Rung> = self.manifest.built().collect();
        let done = built
            .iter()
            .filter(|r| self.progress.is_done(&r.id))
            .count();
        (done, built.len())
    }

    /// The next thing to do.
    pub fn next_step(&self) -> NextStep {
        match self.current() {
            Some(r) => NextStep::Climb {
                id: r.id.clone(),
                readme: self.show(&self.readme(r)),
                work: self.show(&self.work_file(r)),
            },
            None => {
                let ids: Vec<String> = self
                    .states()
                    .into_iter()
                    .filter(|(_, s)| *s == RungState::NeedsHardware)
                    .map(|(r, _)| r.id.clone())
                    .collect();
                if ids.is_empty() {
                    NextStep::AllDone
                } else {
                    NextStep::WaitingOnHardware { ids }
                }
            }
        }
    }

    /// The error for "no rung named and none current": every built rung
    /// is done, or the rest wait for hardware this machine lacks.
    pub fn no_current_rung(&self) -> Error {
        match self.next_step() {
            NextStep::WaitingOnHardware { ids } => Error::NoRungThisMachineCanRun { ids },
            _ => Error::NoCurrentRung,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(done: &[&str]) -> Ladder {
        let text = r#"
[[tier]]
id = "A"
name = "t"
cost = "$0"

[[rung]]
id = "A1"
name = "one"
tier = "A"
status = "built"
teaches = "x"
cost = "$0"
path = "a1"

[[rung]]
id = "A2"
name = "two"
tier = "A"
status = "built"
teaches = "x"
cost = "$0"
path = "a2"

[[rung]]
id = "A3"
name = "three"
tier = "A"
status = "planned"
teaches = "x"
cost = "$0"
"#;
        let manifest = Manifest::parse(Path::new("m.toml"), text).unwrap();
        let mut progress = Progress::default();
        for d in done {
            progress.mark_done(d);
        }
        Ladder::from_parts(PathBuf::from("/repo/exercises"), manifest, progress)
    }

    fn states(l: &Ladder) -> Vec<RungState> {
        l.states().into_iter().map(|(_, s)| s).collect()
    }

    #[test]
    fn states_follow_progress() {
        use RungState::*;
        let fresh = ladder(&[]);
        assert_eq!(states(&fresh), vec![Current, Locked, Planned]);
        assert_eq!(fresh.counts(), (0, 2));
        assert_eq!(
            fresh.next_step(),
            NextStep::Climb {
                id: "A1".into(),
                readme: PathBuf::from("exercises/a1/README.md"),
                work: PathBuf::from("exercises/a1/src/lib.rs"),
            }
        );
        let one = ladder(&["A1"]);
        assert_eq!(states(&one), vec![Done, Current, Planned]);
        // Finishing out of order leaves the earlier rung current.
        let skipped = ladder(&["A2"]);
        assert_eq!(states(&skipped), vec![Current, Done, Planned]);
        let all = ladder(&["A1", "A2"]);
        assert_eq!(all.next_step(), NextStep::AllDone);
        assert_eq!(all.counts(), (2, 2));
        assert_eq!(all.state("A3"), Some(Planned));
    }

    #[test]
    fn a_rung_this_machine_cannot_run_is_passed_over() {
        use RungState::*;
        let mut l = ladder(&[]);
        l.manifest.rungs[0].needs = vec![Need::Rust, Need::CudaDriver];
        // Told nothing, the ladder assumes the machine has it all.
        assert_eq!(states(&l), vec![Current, Locked, Planned]);
        let l = l.with_lacking(vec![Need::CudaDriver]);
        assert_eq!(states(&l), vec![NeedsHardware, Current, Planned]);
        assert_eq!(l.missing_for(&l.manifest.rungs[0]), [Need::CudaDriver]);
        assert_eq!(NeedsHardware.as_str(), "needs hardware");
        // Done stays done on a machine that could not check it again.
        let mut done = l.clone();
        done.progress.mark_done("A1");
        assert_eq!(states(&done), vec![Done, Current, Planned]);
    }

    #[test]
    fn with_the_rest_done_a_rung_that_needs_hardware_is_waited_on() {
        use RungState::*;
        let mut l = ladder(&["A2"]);
        l.manifest.rungs[0].needs = vec![Need::Rust, Need::CudaDriver];
        let l = l.with_lacking(vec![Need::CudaDriver]);
        assert_eq!(states(&l), vec![NeedsHardware, Done, Planned]);
        assert_eq!(l.current(), None);
        // Not "every built rung is done": A1 is built and not done.
        assert_eq!(
            l.next_step(),
            NextStep::WaitingOnHardware {
                ids: vec!["A1".into()]
            }
        );
        let e = l.no_current_rung().to_string();
        assert!(e.contains("A1") && e.contains("doctor"), "{e}");
        assert!(!e.contains("every built rung is done"), "{e}");
        // Once it is done, the climb is over.
        let mut all = l.clone();
        all.progress.mark_done("A1");
        assert_eq!(all.next_step(), NextStep::AllDone);
        assert!(matches!(all.no_current_rung(), Error::NoCurrentRung));
    }

    #[test]
    fn finds_exercises_from_inside_a_rung() {
        let dir = tempfile::tempdir().unwrap();
        let ex = dir.path().join("exercises");
        std::fs::create_dir_all(ex.join("a1/src")).unwrap();
        std::fs::write(ex.join("manifest.toml"), "").unwrap();
        assert_eq!(find_exercises(&ex.join("a1/src"), None).unwrap(), ex);
        assert_eq!(find_exercises(dir.path(), None).unwrap(), ex);
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(find_exercises(elsewhere.path(), Some(&ex)).unwrap(), ex);
        assert!(matches!(
            find_exercises(elsewhere.path(), None),
            Err(Error::ExercisesNotFound { .. })
        ));
    }
}
