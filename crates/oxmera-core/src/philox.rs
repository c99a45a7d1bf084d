//! The random bits every device agrees on: Philox4x32-10 and the map from
//! two of its words to a number in `[0, 1)`.
//!
//! These are integer definitions with no state, here at the bottom so that
//! the tensor stack (`oxmera_tensor::random`, which builds seeded streams
//! and distributions on them) and the kernel library (whose GPU kernel
//! draws the same blocks) check themselves against one definition.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// One Philox4x32-10 block: four random 32-bit words from a 128-bit
/// counter and a 64-bit key (Salmon et al., "Parallel random numbers: as
/// easy as 1, 2, 3", SC'11).
///
/// ```
/// // A known-answer vector published with the Random123 library.
/// assert_eq!(
///     oxmera_core::philox4x32_10([0; 4], [0; 2]),
///     [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
/// );
/// ```
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for _ in 0..10 {
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
        k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
    }
    c
}

/// A uniform double in `[0, 1)` from 53 random bits of two words: the top
/// 53 bits of `hi·2^32 + lo`, times `2^-53`.
pub fn unit_f64(lo: u32, hi: u32) -> f64 {
    let bits = ((u64::from(hi) << 32) | u64::from(lo)) >> 11;
    bits as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answers() {
        // Known-answer vectors published with the Random123 library.
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn unit_interval_ends() {
        assert_eq!(unit_f64(0, 0), 0.0);
        assert!(unit_f64(u32::MAX, u32::MAX) < 1.0);
    }
}
