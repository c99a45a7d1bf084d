//! What the bench ran on: the processor as the kernel names it, the
//! kernels chosen, the threads, the `f32` FMA ceiling and copy bandwidth
//! measured in the run, and the time the hypervisor stole during it.
//!
//! Figures from a shared or virtual machine mean little without these:
//! the same binary measured 457 and 244 GFLOP/s peaks on two clouds'
//! "AMD EPYC", and a run that lost seconds to steal can halve a figure.
//! The processor comes from `/proc/cpuinfo` and the CPU time from
//! `/proc/stat` (Linux); elsewhere the fields read `unknown` and steal
//! is not reported, never guessed.

use serde::{Deserialize, Serialize};

/// The processor, as `/proc/cpuinfo` describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// `model name`, e.g. `AMD EPYC 9B45`.
    pub model_name: String,
    /// `vendor_id`, e.g. `AuthenticAMD`.
    pub vendor: String,
    /// `cpu family` (decimal, as the kernel prints it).
    pub family: Option<u32>,
    /// `model`.
    pub model: Option<u32>,
    /// `stepping`.
    pub stepping: Option<u32>,
    /// Logical CPUs (`processor` entries): the threads the OS schedules.
    pub logical_cpus: usize,
    /// Physical cores: `cpu cores` times the distinct `physical id`s,
    /// when the kernel reports them (a VM often reports its vCPUs).
    pub cores: Option<usize>,
}

impl Cpu {
    /// The processor of this machine, or an empty description where
    /// `/proc/cpuinfo` cannot be read.
    pub fn detect() -> Cpu {
        let mut cpu = std::fs::read_to_string("/proc/cpuinfo")
            .map(|t| parse_cpuinfo(&t))
            .unwrap_or_default();
        if cpu.logical_cpus == 0 {
            cpu.logical_cpus = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0);
        }
        cpu
    }

    /// `AMD EPYC 9B45 (AuthenticAMD, family 26 model 2 stepping 1), 2
    /// logical CPUs, 1 core`.
    pub fn describe(&self) -> String {
        let num = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
        let name = if self.model_name.is_empty() {
            "unknown processor"
        } else {
            &self.model_name
        };
        let vendor = if self.vendor.is_empty() {
            "unknown vendor"
        } else {
            &self.vendor
        };
        let cores = self
            .cores
            .map_or(String::new(), |c| format!(", {c} cores reported"));
        format!(
            "{name} ({vendor}, family {} model {} stepping {}), {} logical CPUs{cores}",
            num(self.family),
            num(self.model),
            num(self.stepping),
            self.logical_cpus
        )
    }
}

/// Reads the first processor's identity and counts the processors in a
/// `/proc/cpuinfo` text. Unknown lines are ignored; a missing field stays
/// empty (ARM kernels, for one, print no `model name`).
pub fn parse_cpuinfo(text: &str) -> Cpu {
    let mut cpu = Cpu::default();
    let mut first = true;
    let mut cores_per_package: Option<usize> = None;
    let mut packages: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            // A blank line ends one processor's block.
            if line.trim().is_empty() && cpu.logical_cpus > 0 {
                first = false;
            }
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => cpu.logical_cpus += 1,
            "physical id" if !packages.iter().any(|p| p == value) => {
                packages.push(value.to_string())
            }
            "cpu cores" if first => cores_per_package = value.parse().ok(),
            "model name" if first => cpu.model_name = value.to_string(),
            "vendor_id" if first => cpu.vendor = value.to_string(),
            "cpu family" if first => cpu.family = value.parse().ok(),
            "model" if first => cpu.model = value.parse().ok(),
            "stepping" if first => cpu.stepping = value.parse().ok(),
            _ => {}
        }
    }
    cpu.cores = cores_per_package.map(|c| c * packages.len().max(1));
    cpu
}

/// The kernel's running totals of CPU time over all CPUs, in clock ticks
/// (`/proc/stat`'s `cpu` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// The first eight columns summed (user through steal; `guest` and
    /// `guest_nice` are already counted inside `user` and `nice`): the
    /// elapsed vCPU time.
    pub total: u64,
    /// The `steal` column (the eighth): time a vCPU was ready to run but
    /// the hypervisor ran something else.
    pub steal: u64,
}

/// Clock ticks per second in `/proc/stat`: `USER_HZ`, which Linux fixes
/// at 100 in its user-space ABI on every architecture it supports
/// (`sysconf(_SC_CLK_TCK)` returns it; reading it would need `libc` and
/// `unsafe` for a constant).
pub const USER_HZ: f64 = 100.0;

impl CpuTimes {
    /// The totals now, or `None` where `/proc/stat` cannot be read.
    pub fn now() -> Option<CpuTimes> {
        std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_proc_stat(&t))
    }

    /// What was stolen between `self` and `later`: seconds of vCPU time,
    /// and the fraction of all vCPU time in the interval.
    pub fn steal_since(self, later: CpuTimes) -> Steal {
        let stolen = later.steal.saturating_sub(self.steal);
        let total = later.total.saturating_sub(self.total);
        Steal {
            seconds: stolen as f64 / USER_HZ,
            fraction: if total == 0 {
                0.0
            } else {
                stolen as f64 / total as f64
            },
        }
    }
}

/// Time stolen by the hypervisor during a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Steal {
    /// Seconds of vCPU time stolen (summed over the vCPUs).
    pub seconds: f64,
    /// The stolen share of all vCPU time in the interval.
    pub fraction: f64,
}

impl std::fmt::Display for Steal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2} s of vCPU time ({:.1}%)",
            self.seconds,
            self.fraction * 100.0
        )
    }
}

/// The aggregate `cpu` line of a `/proc/stat` text: `cpu user nice
/// system idle iowait irq softirq steal [guest guest_nice]`. `None` if it
/// is missing or has fewer than eight numbers (kernels before 2.6.11 had
/// no steal column). `guest` time is already counted in `user`, so the
/// total leaves the guest columns out.
pub fn parse_proc_stat(text: &str) -> Option<CpuTimes> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let nums: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    if nums.len() < 8 {
        return None;
    }
    Some(CpuTimes {
        total: nums[..8].iter().sum(),
        steal: nums[7],
    })
}

/// The one-minute load average (`/proc/loadavg`'s first field): runnable
/// threads, averaged. Steal counts only what the hypervisor takes; a
/// neighbour's build inside the same machine shows here instead, and on a
/// machine whose threads are all busy a peer that spins in a barrier
/// (OpenMP under PyTorch) can run many times slower than alone.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| parse_loadavg(&t))
}

/// The first field of a `/proc/loadavg` text.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// An in-run `f32` FMA ceiling at one vector width.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Vector width in bits.
    pub bits: usize,
    /// All threads at once, GFLOP/s.
    pub gflops: f64,
}

/// The instruction set `isa` and the `f32` GEMM tile it runs here (the
/// tile follows the part: `oxmera_cpu::gemm::tile`).
pub fn kernels(isa: oxmera_cpu::Isa) -> String {
    let k = <f32 as oxmera_cpu::gemm::Scalar>::kernel(isa);
    format!("{}, f32 GEMM tile {}x{}", isa.name(), k.mr(), k.nr())
}

/// The report's header: the machine and what the run chose on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The processor.
    pub cpu: Cpu,
    /// The instruction set of the CPU kernels chosen and the `f32` GEMM
    /// micro-kernel's tile (`avx512, f32 GEMM tile 8x32`, …).
    pub kernels: String,
    /// Threads given to oxmera and every peer.
    pub threads: usize,
    /// `f32` FMA ceilings measured at the start of the run, narrowest
    /// vector first.
    pub fma_peak: Vec<Peak>,
}

impl Machine {
    /// Detects the processor and measures the FMA ceiling on `threads`
    /// threads (briefly in `quick` mode: a plumbing check, not a figure).
    pub fn measure(threads: usize, quick: bool) -> Machine {
        let steps = if quick {
            1 << 12
        } else {
            oxmera_cpu::peak::FULL_STEPS
        };
        let tries = if quick { 1 } else { 3 };
        Machine {
            cpu: Cpu::detect(),
            kernels: kernels(oxmera_cpu::isa()),
            threads,
            fma_peak: oxmera_cpu::peak::fma_peak(threads, steps, tries)
                .into_iter()
                .map(|p| Peak {
                    bits: p.bits,
                    gflops: p.gflops,
                })
                .collect(),
        }
    }

    /// The header lines.
    pub fn lines(&self) -> Vec<String> {
        let peak = if self.fma_peak.is_empty() {
            "not measured on this architecture".to_string()
        } else {
            self.fma_peak
                .iter()
                .map(|p| format!("{:.1} GFLOP/s at {} bits", p.gflops, p.bits))
                .collect::<Vec<_>>()
                .join(", ")
        };
        vec![
            format!("cpu: {}", self.cpu.describe()),
            format!(
                "f32 FMA peak on {} threads, measured now: {peak}",
                self.threads
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC 9B45
stepping\t: 1
physical id\t: 0
cpu cores\t: 1
flags\t\t: fpu vme avx512f

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 17
model name\t: Something Else
stepping\t: 9
physical id\t: 0
cpu cores\t: 1

";

    #[test]
    fn cpuinfo_names_the_first_processor_and_counts_all() {
        let cpu = parse_cpuinfo(CPUINFO);
        assert_eq!(cpu.model_name, "AMD EPYC 9B45");
        assert_eq!(cpu.vendor, "AuthenticAMD");
        assert_eq!(
            (cpu.family, cpu.model, cpu.stepping),
            (Some(26), Some(2), Some(1))
        );
        assert_eq!(cpu.logical_cpus, 2);
        assert_eq!(cpu.cores, Some(1));
        assert_eq!(
            cpu.describe(),
            "AMD EPYC 9B45 (AuthenticAMD, family 26 model 2 stepping 1), \
             2 logical CPUs, 1 cores reported"
        );
    }

    #[test]
    fn cpuinfo_without_x86_fields_leaves_them_empty() {
        // An aarch64 kernel's format: no model name, no family.
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n\
                   processor\t: 1\nBogoMIPS\t: 50.00\n";
        let cpu = parse_cpuinfo(arm);
        assert_eq!(cpu.logical_cpus, 2);
        assert_eq!(cpu.model_name, "");
        assert_eq!((cpu.family, cpu.cores), (None, None));
        assert!(
            cpu.describe()
                .starts_with("unknown processor (unknown vendor")
        );
        // Two sockets of four cores each.
        let two = "processor : 0\nphysical id : 0\ncpu cores : 4\n\n\
                   processor : 1\nphysical id : 1\ncpu cores : 4\n";
        assert_eq!(parse_cpuinfo(two).cores, Some(8));
    }

    #[test]
    fn proc_stat_steal_and_total() {
        let before = "cpu  100 5 50 1000 10 1 2 30 7 0\n\
                      cpu0 50 2 25 500 5 0 1 15 0 0\nintr 12345\n";
        let after = "cpu  300 5 90 1200 10 1 2 280 9 0\ncpu0 1 1 1 1 1 1 1 1\n";
        let (a, b) = (
            parse_proc_stat(before).unwrap(),
            parse_proc_stat(after).unwrap(),
        );
        // The first eight columns; guest (already in user) left out.
        assert_eq!(
            a,
            CpuTimes {
                total: 1198,
                steal: 30
            }
        );
        assert_eq!(b.steal, 280);
        let s = a.steal_since(b);
        // 250 ticks stolen of 690 elapsed, at 100 ticks a second.
        assert_eq!(s.seconds, 2.5);
        assert!((s.fraction - 250.0 / 690.0).abs() < 1e-15);
        assert_eq!(s.to_string(), "2.50 s of vCPU time (36.2%)");
    }

    #[test]
    fn loadavg_first_field() {
        assert_eq!(parse_loadavg("10.50 10.78 10.65 3/456 12345\n"), Some(10.5));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("high 1 1"), None);
    }

    #[test]
    fn proc_stat_without_a_steal_column_is_none() {
        assert_eq!(parse_proc_stat("cpu  1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse_proc_stat("intr 1 2 3\n"), None);
        assert_eq!(parse_proc_stat("cpu  1 2 x 4 5 6 7 8\n"), None);
        // A counter that went backwards (a restored VM) steals nothing.
        let a = CpuTimes {
            total: 10,
            steal: 5,
        };
        let b = CpuTimes { total: 9, steal: 4 };
        assert_eq!(
            a.steal_since(b),
            Steal {
                seconds: 0.0,
                fraction: 0.0
            }
        );
    }
}
