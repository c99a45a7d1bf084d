//! Host-side random numbers for shuffling and procedural data.
//!
//! Everything here is a pure function of a seed and a position, computed
//! with the same Philox4x32-10 block as [`oxmera_tensor::Generator`]: the
//! `i`-th word of stream `s` under seed `k` is block `[i, s]` under key `k`.
//! So an epoch's order is a function of `(seed, epoch)` alone — nothing to
//! save for resuming but those two numbers — and the built-in data sets
//! are the same on every machine.

use oxmera_tensor::philox4x32_10;

/// The stream the loader's shuffle of epoch `e` uses is `e`; splits and
/// procedural data sets use streams counted down from the top of the range
/// so they never meet an epoch.
pub(crate) const SPLIT_STREAM: u64 = u64::MAX;
pub(crate) const SPIRALS_STREAM: u64 = u64::MAX - 1;
pub(crate) const MOONS_STREAM: u64 = u64::MAX - 2;
pub(crate) const SINE_STREAM: u64 = u64::MAX - 3;

/// A counter-based stream of random words.
#[derive(Debug, Clone)]
pub(crate) struct Stream {
    key: [u32; 2],
    stream: u64,
    counter: u64,
}

impl Stream {
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        Stream {
            key: [seed as u32, (seed >> 32) as u32],
            stream,
            counter: 0,
        }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let c = self.counter;
        self.counter += 1;
        let w = philox4x32_10(
            [
                c as u32,
                (c >> 32) as u32,
                self.stream as u32,
                (self.stream >> 32) as u32,
            ],
            self.key,
        );
        (u64::from(w[1]) << 32) | u64::from(w[0])
    }

    /// Moves the counter `n` words on: where a pure function of a position
    /// (a training step) starts reading.
    pub(crate) fn skip(&mut self, n: u64) {
        self.counter = self.counter.wrapping_add(n);
    }

    /// A uniform integer in `0..bound` (`bound > 0`), by Lemire's
    /// multiply-and-reject method, which has no modulo bias.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound > 0);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(bound);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform double in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal value (Box–Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        // 1 - u lies in (0, 1], so the log is finite.
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// A uniformly random permutation of `0..n`, a pure function of
/// `(n, seed, stream)` (Fisher–Yates driven by [`Stream`]).
pub fn permutation(n: usize, seed: u64, stream: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Stream::new(seed, stream);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_hits_every_value() {
        let mut rng = Stream::new(7, 0);
        let mut seen = [0usize; 5];
        for _ in 0..1000 {
            seen[rng.below(5) as usize] += 1;
        }
        // Each bucket expects 200; 120 is over five standard deviations away.
        assert!(seen.iter().all(|&c| c > 120), "{seen:?}");
    }

    #[test]
    fn permutation_is_a_function_of_its_arguments() {
        let a = permutation(50, 1, 0);
        assert_eq!(a, permutation(50, 1, 0));
        assert_ne!(a, permutation(50, 1, 1));
        assert_ne!(a, permutation(50, 2, 0));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert!(permutation(0, 1, 0).is_empty());
        assert_eq!(permutation(1, 1, 0), vec![0]);
    }

    #[test]
    fn normal_has_plausible_moments() {
        let mut rng = Stream::new(3, 9);
        let xs: Vec<f64> = (0..4000).map(|_| rng.normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        // Standard errors: mean 1/sqrt(4000) ≈ 0.016, variance ≈ 0.022.
        assert!(mean.abs() < 0.08, "{mean}");
        assert!((var - 1.0).abs() < 0.11, "{var}");
    }
}
