//! Where data lives.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A device: a value naming where a tensor's storage lives and which
/// backend computes on it. It is only a name; the backend registry in
/// `oxmera-tensor` maps it to an implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Device {
    /// Host memory, computed by the naive reference backend (the oracle).
    Reference,
    /// Host memory, computed by the optimized CPU backend.
    Cpu,
    /// An NVIDIA GPU, by ordinal.
    Cuda(usize),
    /// A GPU reached through wgpu, by adapter ordinal.
    Wgpu(usize),
}

impl Device {
    /// Whether the device's memory is host memory that can be read directly.
    pub const fn is_host(self) -> bool {
        matches!(self, Device::Reference | Device::Cpu)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Reference => f.write_str("reference"),
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
            Device::Wgpu(n) => write!(f, "wgpu:{n}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// Parses `reference`, `cpu`, `cuda`, `cuda:N`, `wgpu`, `wgpu:N`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let unknown = || Error::UnknownDevice {
            given: s.to_string(),
        };
        let (name, ordinal) = match s.split_once(':') {
            Some((name, n)) => (name, Some(n.parse::<usize>().map_err(|_| unknown())?)),
            None => (s, None),
        };
        match (name, ordinal) {
            ("reference", None) => Ok(Device::Reference),
            ("cpu", None) => Ok(Device::Cpu),
            ("cuda", n) => Ok(Device::Cuda(n.unwrap_or(0))),
            ("wgpu", n) => Ok(Device::Wgpu(n.unwrap_or(0))),
            _ => Err(unknown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for d in [
            Device::Reference,
            Device::Cpu,
            Device::Cuda(0),
            Device::Cuda(3),
            Device::Wgpu(1),
        ] {
            assert_eq!(d.to_string().parse::<Device>().unwrap(), d);
        }
        assert_eq!("cuda".parse::<Device>().unwrap(), Device::Cuda(0));
        for bad in ["gpu", "cpu:1", "cuda:x", ""] {
            assert!(matches!(
                bad.parse::<Device>(),
                Err(Error::UnknownDevice { .. })
            ));
        }
    }
}
