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
    /// A device that a crate outside oxmera provides (a learner's backend,
    /// a vendor's plug-in), named by that crate: see [`Device::custom`].
    Custom(CustomDevice),
}

/// The default device is [`Device::Cpu`], the optimized host backend, as
/// PyTorch's is its CPU: what `Tensor::try_from(vec![..])` and a layer
/// config's `init` use when a program names none.
impl Default for Device {
    fn default() -> Device {
        Device::Cpu
    }
}

/// The names the built-in variants answer to; a custom device may not
/// take one.
const BUILT_IN: [&str; 4] = ["reference", "cpu", "cuda", "wgpu"];

/// The name and ordinal of a [`Device::Custom`].
///
/// The name is interned (kept for the life of the process, once per
/// distinct name), so a custom device stays a small `Copy` value like the
/// built-in ones and compares by its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomDevice {
    name: &'static str,
    ordinal: usize,
}

impl CustomDevice {
    /// The device's name (`"loopback"` in `loopback:0`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The device's ordinal (`0` in `loopback:0`).
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
}

/// Every custom name made so far. Names are few (one per backend crate
/// linked), so a list searched linearly is enough, and leaking each once
/// is what lets `Device` stay `Copy`.
fn custom_names() -> &'static std::sync::Mutex<Vec<&'static str>> {
    static NAMES: std::sync::OnceLock<std::sync::Mutex<Vec<&'static str>>> =
        std::sync::OnceLock::new();
    NAMES.get_or_init(Default::default)
}

/// The interned copy of `name`, if some code has made a device of it.
fn known_custom(name: &str) -> Option<&'static str> {
    let names = custom_names().lock().unwrap_or_else(|e| e.into_inner());
    names.iter().copied().find(|n| *n == name)
}

impl Device {
    /// A custom device `name:ordinal`, for a backend crate outside oxmera.
    ///
    /// The name is lowercase ASCII letters, digits, `_` and `-`, starts
    /// with a letter, is at most 32 bytes long and is none of the built-in
    /// names; anything else is [`Error::UnknownDevice`]. Once a name has
    /// been made, `"name:N"` parses to it.
    ///
    /// ```
    /// use oxmera_core::Device;
    /// let d = Device::custom("mydev", 1)?;
    /// assert_eq!(d.to_string(), "mydev:1");
    /// assert_eq!("mydev:1".parse::<Device>()?, d);
    /// assert!(Device::custom("cpu", 0).is_err());
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn custom(name: &str, ordinal: usize) -> Result<Device, Error> {
        let well_formed = name.len() <= 32
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
            && !BUILT_IN.contains(&name);
        if !well_formed {
            return Err(Error::UnknownDevice {
                given: format!("{name}:{ordinal}"),
            });
        }
        let mut names = custom_names().lock().unwrap_or_else(|e| e.into_inner());
        let name = match names.iter().copied().find(|n| *n == name) {
            Some(n) => n,
            None => {
                let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
                names.push(leaked);
                leaked
            }
        };
        Ok(Device::Custom(CustomDevice { name, ordinal }))
    }

    /// Whether the device's memory is host memory that can be read directly.
    pub const fn is_host(self) -> bool {
        matches!(self, Device::Reference | Device::Cpu)
    }

    /// The device's kind, the part of its name before the ordinal
    /// (`"cpu"`, `"cuda"`, `"loopback"`): what a backend provider answers to.
    pub fn kind(&self) -> &'static str {
        match self {
            Device::Reference => "reference",
            Device::Cpu => "cpu",
            Device::Cuda(_) => "cuda",
            Device::Wgpu(_) => "wgpu",
            Device::Custom(c) => c.name,
        }
    }

    /// The ordinal among devices of its kind (0 for the host devices).
    pub fn ordinal(&self) -> usize {
        match self {
            Device::Reference | Device::Cpu => 0,
            Device::Cuda(n) | Device::Wgpu(n) => *n,
            Device::Custom(c) => c.ordinal,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Reference => f.write_str("reference"),
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
            Device::Wgpu(n) => write!(f, "wgpu:{n}"),
            Device::Custom(c) => write!(f, "{}:{}", c.name, c.ordinal),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// Parses `reference`, `cpu`, `cuda`, `cuda:N`, `wgpu`, `wgpu:N`, and
    /// `NAME` or `NAME:N` for a custom device whose name some code has
    /// already made (a backend crate's provider does, when the registry
    /// first lists it: `oxmera_tensor::registry::parse_device` makes sure
    /// of that before parsing).
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
            (name, n) => match known_custom(name) {
                Some(name) => Ok(Device::Custom(CustomDevice {
                    name,
                    ordinal: n.unwrap_or(0),
                })),
                None => Err(unknown()),
            },
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

    #[test]
    fn custom_devices_parse_once_made_and_refuse_bad_names() {
        assert!("testdev-a:2".parse::<Device>().is_err());
        let d = Device::custom("testdev-a", 2).unwrap();
        assert_eq!(d.kind(), "testdev-a");
        assert_eq!(d.ordinal(), 2);
        assert!(!d.is_host());
        assert_eq!("testdev-a:2".parse::<Device>().unwrap(), d);
        assert_eq!("testdev-a".parse::<Device>().unwrap().ordinal(), 0);
        // The same name interns once: equal values, one leaked string.
        let again = Device::custom("testdev-a", 2).unwrap();
        assert_eq!(again, d);
        for bad in ["", "Cpu", "cpu", "cuda", "9lives", "a b", &"x".repeat(33)] {
            assert!(
                matches!(Device::custom(bad, 0), Err(Error::UnknownDevice { .. })),
                "{bad:?}"
            );
        }
    }
}
