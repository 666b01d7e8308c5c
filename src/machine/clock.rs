//! The core clock, estimated from dependent instruction chains on a pinned thread.
//!
//! Bytes per cycle needs the clock the core actually ran at, not the one on the box (turbo,
//! power limits and VMs move it), and /proc/cpuinfo's MHz is a snapshot or a lie under a
//! hypervisor. A chain of dependent 1-cycle adds runs at one add per cycle on every current
//! core, so its length over its time is the clock. A second chain with a different, known
//! latency (x86-64: `imul`, 3 cycles on Intel since Sandy Bridge and on AMD Zen; aarch64: an
//! `eor`/`add` pair, 2 cycles) checks that the first was not collapsed or slowed.

use crate::machine::counters::{Counter, Host, ThreadCounters};
use crate::platform::{self, PinnedThread, now_ns};

#[derive(Debug, Clone, PartialEq)]
pub struct ClockEstimate {
    /// GHz from the dependent 1-cycle add chain (min time of 7 runs).
    pub ghz: f64,
    /// GHz from a second, different dependent chain, as a check.
    pub check_ghz: f64,
    /// Whether the two agree within 5 %.
    pub agree: bool,
    /// How it was measured, for the header line.
    pub method: String,
    /// GHz from the cycles counted on the thread during the add chain's fastest run, where
    /// the PMU counts cycles.
    pub counted_ghz: Option<f64>,
}

/// The counted clock differs from the chain's estimate by more than this: both are printed.
pub(crate) const COUNTED_TOLERANCE: f64 = 0.05;

/// Timed runs of each chain; the minimum time is kept.
pub(crate) const RUNS: usize = 7;

/// Instructions per unrolled block in the asm chains.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const BLOCK: u64 = 100;
/// Adds per run of the main chain: 2 M cycles, under a millisecond at 3 GHz. Short runs are
/// the point: on a shared CPU the scheduler's slices are a few ms, so a short run has a good
/// chance of running whole, and the minimum keeps the one that did.
const ADD_CYCLES: u64 = 2_000_000;
/// Cycles per run of the check chain.
const CHECK_CYCLES: u64 = 1_800_000;
/// Untimed add-chain cycles first, so an idle core reaches its working clock (about 20 ms).
const WARMUP_CYCLES: u64 = 60_000_000;

impl ClockEstimate {
    /// Measures on `cpu` (pinned for the measurement when given, raised to the user-interactive
    /// QoS class where CPUs cannot be chosen; the thread's previous placement is restored
    /// afterwards). Runs one untimed warm-up of each chain, then 7 timed
    /// runs of each, interleaved, and keeps the shortest: about 35 ms at 2.5 GHz.
    pub fn measure(cpu: Option<usize>) -> ClockEstimate {
        let pin = cpu.map(PinnedThread::to);
        let mut add_ns = f64::INFINITY;
        let mut check_ns = f64::INFINITY;
        let mut counted_ghz = None;
        // Cycles counted around each add run (read outside its timing), where the PMU allows.
        let (counters, available) = ThreadCounters::open(Host::default());
        let counting = available.has(Counter::Cycles);
        chains::add(WARMUP_CYCLES);
        chains::check(CHECK_CYCLES);
        for _ in 0..RUNS {
            let before = counters.read();
            let ns = time_ns(|| chains::add(ADD_CYCLES));
            let after = counters.read();
            if ns < add_ns {
                add_ns = ns;
                counted_ghz = counting
                    .then(|| counters.delta(&before, &after).cycles)
                    .flatten()
                    .map(|c| c as f64 / ns);
            }
            check_ns = check_ns.min(time_ns(|| chains::check(CHECK_CYCLES)));
        }
        let pin_note = match (&cpu, pin) {
            (Some(c), Some(Ok(guard))) => {
                drop(guard);
                if platform::HAS_AFFINITY {
                    format!(", on CPU {c}")
                } else {
                    // No CPU can be chosen (macOS): the thread ran at the class that prefers
                    // P-cores.
                    ", at user-interactive QoS".to_string()
                }
            }
            (Some(c), Some(Err(e))) => format!(", not pinned to CPU {c}: {e}"),
            _ => String::new(),
        };
        let ghz = ADD_CYCLES as f64 / add_ns;
        let check_ghz = CHECK_CYCLES as f64 / check_ns;
        ClockEstimate {
            ghz,
            check_ghz,
            agree: agree(ghz, check_ghz),
            method: format!("{}, min of {RUNS} runs{pin_note}", chains::MAIN_CHAIN),
            counted_ghz,
        }
    }

    /// A made-up estimate for tests and fixtures: both chains at `ghz`.
    pub fn fixed(ghz: f64) -> ClockEstimate {
        ClockEstimate {
            ghz,
            check_ghz: ghz,
            agree: true,
            method: "fixed".to_string(),
            counted_ghz: None,
        }
    }

    /// "3.20 GHz (dependent add chain, min of 7 runs)" or, when the chains disagree,
    /// "3.20 GHz (dependent add chain, min of 7 runs) vs 2.10 GHz from the check chain: they
    /// disagree".
    pub fn line(&self) -> String {
        let mut line = if self.agree {
            format!("{:.2} GHz ({})", self.ghz, self.method)
        } else {
            format!(
                "{:.2} GHz ({}) vs {:.2} GHz from the check chain: they disagree",
                self.ghz, self.method, self.check_ghz
            )
        };
        if let Some(c) = self.counted_differs() {
            line.push_str(&format!("; counted cycles say {c:.2} GHz"));
        }
        line
    }

    /// The counted clock when it differs from the estimate by more than
    /// [`COUNTED_TOLERANCE`].
    fn counted_differs(&self) -> Option<f64> {
        self.counted_ghz
            .filter(|c| self.ghz > 0.0 && ((c - self.ghz) / self.ghz).abs() > COUNTED_TOLERANCE)
    }
}

/// Within 5 % of the main figure, both finite and positive.
fn agree(ghz: f64, check: f64) -> bool {
    ghz.is_finite() && check.is_finite() && ghz > 0.0 && ((check - ghz) / ghz).abs() <= 0.05
}

/// Nanoseconds that `f` took, by CLOCK_MONOTONIC_RAW where there is one.
fn time_ns(f: impl FnOnce()) -> f64 {
    let start = now_ns();
    f();
    (now_ns() - start).max(1) as f64
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod chains {
    use super::BLOCK;
    use std::arch::asm;

    pub(crate) const MAIN_CHAIN: &str = "dependent add chain";

    /// `cycles` dependent `add r64, r64`, 1 cycle each. The addend is a register holding a
    /// value the core cannot know at rename time, so no renamer folds the chain (Golden Cove
    /// and later fold `add r, imm` chains).
    pub fn add(cycles: u64) {
        let blocks = (cycles / BLOCK).max(1);
        let mut x: u64 = std::hint::black_box(0);
        let step: u64 = std::hint::black_box(1);
        // SAFETY: register-only arithmetic and a counted loop; no memory, stack or control
        // flow leaves the block. `n` counts down to 0 from at least 1.
        unsafe {
            asm!(
                "2:",
                ".rept 100",
                "add {x}, {step}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                step = in(reg) step,
                n = inout(reg) blocks => _,
                options(nomem, nostack),
            );
        }
        std::hint::black_box(x);
    }

    /// `cycles / 3` dependent `imul r64, r64`, 3 cycles each.
    pub fn check(cycles: u64) {
        let blocks = (cycles / 3 / BLOCK).max(1);
        let mut x: u64 = std::hint::black_box(3);
        // SAFETY: as in `add`: register-only arithmetic in a counted loop.
        unsafe {
            asm!(
                "2:",
                ".rept 100",
                "imul {x}, {x}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                n = inout(reg) blocks => _,
                options(nomem, nostack),
            );
        }
        std::hint::black_box(x);
    }
}

#[cfg(target_arch = "aarch64")]
#[allow(unsafe_code)]
mod chains {
    use super::BLOCK;
    use std::arch::asm;

    pub(crate) const MAIN_CHAIN: &str = "dependent add chain";

    /// `cycles` dependent `add x, x, y`, 1 cycle each.
    pub fn add(cycles: u64) {
        let blocks = (cycles / BLOCK).max(1);
        let mut x: u64 = std::hint::black_box(0);
        let step: u64 = std::hint::black_box(1);
        // SAFETY: register-only arithmetic and a counted loop; no memory, stack or control
        // flow leaves the block. `n` counts down to 0 from at least 1.
        unsafe {
            asm!(
                "2:",
                ".rept 100",
                "add {x}, {x}, {step}",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                x = inout(reg) x,
                step = in(reg) step,
                n = inout(reg) blocks => _,
                options(nomem, nostack),
            );
        }
        std::hint::black_box(x);
    }

    /// `cycles / 2` dependent `eor`/`add` pairs, 2 cycles each.
    pub fn check(cycles: u64) {
        let blocks = (cycles / 2 / (BLOCK / 2)).max(1);
        let mut x: u64 = std::hint::black_box(0);
        let step: u64 = std::hint::black_box(0x9e37);
        // SAFETY: as in `add`: register-only arithmetic in a counted loop.
        unsafe {
            asm!(
                "2:",
                ".rept 50",
                "eor {x}, {x}, {step}",
                "add {x}, {x}, {step}",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                x = inout(reg) x,
                step = in(reg) step,
                n = inout(reg) blocks => _,
                options(nomem, nostack),
            );
        }
        std::hint::black_box(x);
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod chains {
    pub use super::portable::{MAIN_CHAIN, add, check};
}

/// Chains in plain Rust for architectures without asm chains here. Every step depends on the
/// one before through a rotate and an xor of a value the compiler cannot see, which it cannot
/// fold across iterations, so the loop stays a chain. The cycles per step are what x86-64 and
/// most RISC cores take (rotate 1 + xor 1, rotate 1 + add 1 + xor 1); other cores may fuse
/// them, hence "approximate".
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), allow(dead_code))]
mod portable {
    use std::hint::black_box;

    pub(crate) const MAIN_CHAIN: &str = "portable rotate/xor chain (approximate)";

    /// `cycles / 2` steps of `x = rotl(x, 1) ^ k`, 2 cycles each.
    pub fn add(cycles: u64) {
        let mut x: u64 = black_box(0x1234_5678);
        let k: u64 = black_box(0x9e37_79b9);
        for _ in 0..cycles / 2 {
            x = x.rotate_left(1) ^ k;
        }
        black_box(x);
    }

    /// `cycles / 3` steps of `x = (rotl(x, 7) + k) ^ k`, 3 cycles each.
    pub fn check(cycles: u64) {
        let mut x: u64 = black_box(0x1234_5678);
        let k: u64 = black_box(0x9e37_79b9);
        for _ in 0..cycles / 3 {
            x = x.rotate_left(7).wrapping_add(k) ^ k;
        }
        black_box(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_cycles_are_printed_beside_the_estimate_only_when_they_differ() {
        let mut c = ClockEstimate::fixed(3.0);
        assert_eq!(c.counted_differs(), None);
        c.counted_ghz = Some(3.1);
        assert_eq!(c.counted_differs(), None, "within 5 %");
        assert!(!c.line().contains("counted"));
        c.counted_ghz = Some(3.6);
        assert_eq!(c.counted_differs(), Some(3.6));
        assert!(
            c.line().ends_with("; counted cycles say 3.60 GHz"),
            "{}",
            c.line()
        );
    }

    #[test]
    fn agreement_is_within_five_percent() {
        assert!(agree(3.0, 3.1));
        assert!(agree(3.0, 2.86));
        assert!(!agree(3.0, 3.2));
        assert!(!agree(3.0, f64::NAN));
        assert!(!agree(0.0, 0.0));
    }

    #[test]
    fn lines_show_one_figure_or_both() {
        let mut c = ClockEstimate::fixed(3.2);
        c.method = "dependent add chain, min of 7 runs".into();
        assert_eq!(c.line(), "3.20 GHz (dependent add chain, min of 7 runs)");
        c.check_ghz = 2.1;
        c.agree = false;
        assert_eq!(
            c.line(),
            "3.20 GHz (dependent add chain, min of 7 runs) vs 2.10 GHz from the check chain: they disagree"
        );
    }

    #[test]
    fn portable_chains_run() {
        // Only that they run and return; their speed is not a test (shared machine).
        portable::add(1000);
        portable::check(1000);
    }
}
