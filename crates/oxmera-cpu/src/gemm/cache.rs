//! How large one core's L2 cache is: the one cache size the blocking
//! depends on, read once from the operating system.
//!
//! The packed B block must stay in L2 while every A panel of a task sweeps
//! it, and L2 sizes differ more than a constant can cover: 2 MiB per core
//! on recent Intel server parts, 1 MiB on AMD Zen 4 and 5, 512 KiB on
//! older cores. Linux describes each cache level in sysfs; elsewhere (or
//! when the files are missing, as in some containers) [`FALLBACK_L2`] is
//! assumed.

use std::sync::OnceLock;

/// The L2 size assumed where it cannot be read: the smallest of the
/// current x86 server cores', so that the B block fits where the guess is
/// wrong.
pub(crate) const FALLBACK_L2: usize = 1 << 20;

/// One core's L2 in bytes (read once; kept within 256 KiB ..= 8 MiB, so a
/// misreported size cannot make blocks absurd).
pub(crate) fn l2_bytes() -> usize {
    static L2: OnceLock<usize> = OnceLock::new();
    *L2.get_or_init(|| read_l2().unwrap_or(FALLBACK_L2).clamp(1 << 18, 8 << 20))
}

/// The size of the first level-2 data or unified cache sysfs lists for
/// CPU 0.
fn read_l2() -> Option<usize> {
    let dir = "/sys/devices/system/cpu/cpu0/cache";
    (0..8).find_map(|i| {
        let read = |file: &str| std::fs::read_to_string(format!("{dir}/index{i}/{file}")).ok();
        let kind = read("type")?;
        let data = matches!(kind.trim(), "Data" | "Unified");
        (data && read("level")?.trim() == "2")
            .then(|| parse_size(&read("size")?))
            .flatten()
    })
}

/// sysfs's `1024K`, `2M` or `65536` as bytes.
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.strip_suffix('K') {
        Some(d) => (d, 1 << 10),
        None => match text.strip_suffix('M') {
            Some(d) => (d, 1 << 20),
            None => (text, 1),
        },
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes() {
        assert_eq!(parse_size("1024K\n"), Some(1 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("65536"), Some(65536));
        assert_eq!(parse_size("big"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn a_listed_l2_is_found() {
        // Where Linux lists a level-2 cache, the search must find its size.
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index2/level");
        if std::fs::read_to_string(dir).is_ok_and(|l| l.trim() == "2") {
            let l2 = read_l2().expect("sysfs lists an L2 but its size was not read");
            assert!(l2 >= 1 << 10 && l2 % 1024 == 0, "{l2}");
        }
    }
}
