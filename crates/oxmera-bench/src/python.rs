//! The NumPy and PyTorch peers: a long-lived `python3` running
//! `peers/peer.py` (its docs describe the line protocol), so that their
//! runs interleave with oxmera's like any other contender's.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The script, embedded so the binary runs from any directory.
const SCRIPT: &str = include_str!("../peers/peer.py");

/// A running peer process and the libraries it found.
pub struct Python {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// NumPy's version, if it imports.
    pub numpy: Option<String>,
    /// PyTorch's version, if it imports.
    pub torch: Option<String>,
}

impl Python {
    /// Starts the interpreter `exe` (`python3`, or a virtual
    /// environment's) with the peer script, its libraries limited to
    /// `threads` threads, and `digits` (the stem of the files
    /// [`crate::cnn`] writes) in `OXMERA_BENCH_DIGITS`. Errors (no such
    /// interpreter, a failed start) come back as a sentence for the skip
    /// line.
    pub fn start(exe: &str, threads: usize, digits: &Path) -> Result<Python, String> {
        let n = threads.to_string();
        let mut child = Command::new(exe)
            .args(["-u", "-c", SCRIPT])
            .env("OPENBLAS_NUM_THREADS", &n)
            .env("OMP_NUM_THREADS", &n)
            .env("MKL_NUM_THREADS", &n)
            .env("OXMERA_BENCH_THREADS", &n)
            .env("OXMERA_BENCH_DIGITS", digits)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{exe} could not be started ({e})"))?;
        let stdin = child.stdin.take().expect("stdin was piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout was piped"));
        let mut py = Python {
            child,
            stdin,
            stdout,
            numpy: None,
            torch: None,
        };
        let hello = py.line()?;
        let (numpy, torch) = parse_hello(&hello)?;
        py.numpy = numpy;
        py.torch = torch;
        Ok(py)
    }

    fn line(&mut self) -> Result<String, String> {
        let mut s = String::new();
        match self.stdout.read_line(&mut s) {
            Ok(0) => Err("the python peer exited".to_string()),
            Ok(_) => Ok(s.trim_end().to_string()),
            Err(e) => Err(format!("reading from the python peer: {e}")),
        }
    }

    /// Times one run of `bench` with `args` in `lib` (`numpy` or
    /// `torch`): seconds, or why it was skipped.
    pub fn run(&mut self, lib: &str, bench: &str, args: &[usize]) -> Result<f64, String> {
        let mut request = format!("{lib} {bench}");
        for a in args {
            request.push_str(&format!(" {a}"));
        }
        writeln!(self.stdin, "{request}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("writing to the python peer: {e}"))?;
        parse_reply(&self.line()?)
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        // Closing stdin ends the script's loop; wait so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hello numpy=2.1.0 torch=-` → the two versions (`-` for absent).
fn parse_hello(line: &str) -> Result<(Option<String>, Option<String>), String> {
    let mut words = line.split_whitespace();
    if words.next() != Some("hello") {
        return Err(format!("the python peer said {line:?} instead of hello"));
    }
    let mut found = (None, None);
    for w in words {
        let (k, v) = w.split_once('=').unwrap_or((w, "-"));
        let v = (v != "-").then(|| v.to_string());
        match k {
            "numpy" => found.0 = v,
            "torch" => found.1 = v,
            _ => {}
        }
    }
    Ok(found)
}

/// `ok 0.0123` → seconds; `skip reason` → the reason.
fn parse_reply(line: &str) -> Result<f64, String> {
    match line.split_once(' ') {
        Some(("ok", t)) => t
            .parse::<f64>()
            .map_err(|_| format!("the python peer replied {line:?}")),
        Some(("skip", why)) => Err(why.to_string()),
        _ => Err(format!("the python peer replied {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_lines() {
        assert_eq!(
            parse_hello("hello numpy=2.4.6 torch=-"),
            Ok((Some("2.4.6".into()), None))
        );
        assert!(parse_hello("Traceback").is_err());
        assert_eq!(parse_reply("ok 0.25"), Ok(0.25));
        assert_eq!(
            parse_reply("skip torch has no conv here"),
            Err("torch has no conv here".into())
        );
        assert!(parse_reply("ok fast").is_err());
    }
}
