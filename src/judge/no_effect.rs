//! Settings that change nothing on this machine, found before the run so that a report can say
//! so once, beside its table: a reader comparing `--pin spread` with `--pin compact` on a
//! machine where both place the threads on the same CPUs, or `--huge-pages on` with `off` where
//! the kernel's transparent huge pages are `never`, would otherwise read noise as an effect.

use crate::base::units::cpu_ranges;
use crate::engine::plan::HugePages;
use crate::machine::thp::ThpMode;
use crate::machine::topology::PinPolicy;

/// The setting a note is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Pin,
    HugePages,
}

/// A setting that changes nothing here, and why, as one sentence without its full stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoEffect {
    pub setting: Setting,
    pub text: String,
}

/// The CPUs `threads` workers run on with a pinning order (worker i on `order[i % len]`, as
/// the engine places them), sorted: where the threads are, not which one is where.
fn placement(order: &[usize], threads: usize) -> Vec<usize> {
    if order.is_empty() {
        return Vec::new();
    }
    let mut cpus: Vec<usize> = (0..threads).map(|i| order[i % order.len()]).collect();
    cpus.sort_unstable();
    cpus
}

/// Spread and compact pinning compared at every thread count of the run: when both put the
/// threads on the same CPUs, the choice between them changes nothing. `order_of` gives a
/// policy's order over the CPUs the process may use. No note for `--pin none` (the scheduler
/// places the threads, so nothing can be compared).
pub fn pin_note(
    pin: PinPolicy,
    order_of: impl Fn(PinPolicy) -> Vec<usize>,
    threads: &[usize],
) -> Option<NoEffect> {
    let other = match pin {
        PinPolicy::Spread => PinPolicy::Compact,
        PinPolicy::Compact => PinPolicy::Spread,
        PinPolicy::None => return None,
    };
    let (mine, theirs) = (order_of(pin), order_of(other));
    let most = threads.iter().copied().max()?;
    let same = threads
        .iter()
        .all(|&n| placement(&mine, n) == placement(&theirs, n));
    if !same {
        return None;
    }
    let cpus = cpu_ranges(placement(&mine, most).into_iter().map(|c| c as i32)).join(", ");
    let threads = crate::base::units::threads_phrase(most);
    Some(NoEffect {
        setting: Setting::Pin,
        text: format!(
            "--pin {} changes nothing here: {} and {} place the threads on the same CPUs at every \
             thread count of this run ({threads}: CPUs {cpus})",
            policy_name(pin),
            policy_name(pin),
            policy_name(other)
        ),
    })
}

/// `--pin` where the OS places every thread itself (macOS): `placement` says how.
pub(crate) fn unpinned_note(pin: PinPolicy, placement: &str) -> NoEffect {
    NoEffect {
        setting: Setting::Pin,
        text: format!(
            "--pin {} changes nothing here: placement is {placement}",
            policy_name(pin)
        ),
    }
}

/// `--huge-pages` where the kernel's transparent huge pages are `never`, or where the OS has
/// none (`os_note`, macOS): the arrays sit on base pages whatever the flag asks.
pub fn huge_pages_note(
    huge_pages: HugePages,
    thp: Option<ThpMode>,
    os_note: Option<&str>,
) -> Option<NoEffect> {
    let why = match (thp, os_note) {
        (_, Some(os)) => format!("huge pages are {os}"),
        (Some(ThpMode::Never), None) => "transparent huge pages are `never` \
             (/sys/kernel/mm/transparent_hugepage/enabled), so the arrays sit on base pages \
             either way"
            .to_string(),
        _ => return None,
    };
    Some(NoEffect {
        setting: Setting::HugePages,
        text: format!("--huge-pages {huge_pages} changes nothing here: {why}"),
    })
}

fn policy_name(p: PinPolicy) -> &'static str {
    match p {
        PinPolicy::Spread => "spread",
        PinPolicy::Compact => "compact",
        PinPolicy::None => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_wraps_and_ignores_order_within() {
        assert_eq!(placement(&[2, 0, 1], 2), vec![0, 2]);
        assert_eq!(placement(&[1, 0], 3), vec![0, 1, 1]);
        assert!(placement(&[], 4).is_empty());
    }

    #[test]
    fn orders_that_differ_only_in_turn_place_the_same() {
        let order = |p| match p {
            PinPolicy::Compact => vec![0, 1, 2, 3],
            _ => vec![1, 0, 3, 2],
        };
        // 2 threads: {0, 1} both ways; 4: all.
        assert!(pin_note(PinPolicy::Spread, order, &[2, 4]).is_some());
        // 1 thread: CPU 1 against CPU 0.
        assert!(pin_note(PinPolicy::Spread, order, &[1, 2]).is_none());
        assert!(pin_note(PinPolicy::None, order, &[2]).is_none());
    }

    #[test]
    fn huge_pages_only_under_never() {
        assert!(huge_pages_note(HugePages::On, Some(ThpMode::Never), None).is_some());
        assert!(
            huge_pages_note(HugePages::Off, Some(ThpMode::Never), None)
                .unwrap()
                .text
                .starts_with("--huge-pages off")
        );
        assert!(huge_pages_note(HugePages::On, Some(ThpMode::Madvise), None).is_none());
        assert!(huge_pages_note(HugePages::On, None, None).is_none());
        let mac = huge_pages_note(HugePages::On, None, Some("not applicable on macOS")).unwrap();
        assert_eq!(
            mac.text,
            "--huge-pages on changes nothing here: huge pages are not applicable on macOS"
        );
        assert!(
            unpinned_note(PinPolicy::Spread, "up to the scheduler")
                .text
                .ends_with("placement is up to the scheduler")
        );
    }
}
