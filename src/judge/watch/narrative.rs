//! What the monitor says about contention, in words: the log's start, lasting and end lines,
//! a suspect in one phrase, durations. The app writes them into the log; the panels show the
//! same phrases, so a suspect reads alike everywhere.

use super::contention::{Episode, EpisodeKind, Reference};
use super::suspects::Suspect;
use crate::base::units::format_bytes;
use crate::machine::host::HostSample;
use std::time::Duration;

/// GB/s with as many decimals as the size of the number deserves.
pub(crate) fn gbs(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// `45 s`, `1 min 05 s`, `2 h 03 min`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, s % 3600 / 60)
    }
}

/// A count per second in a few characters: `850/s`, `12k/s`, `3.4M/s`.
fn per_second(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M/s", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k/s", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1}k/s", v / 1e3)
    } else {
        format!("{v:.0}/s")
    }
}

/// `PID 4242 memhog (alice)`, or `PID 600 another stream-top (bob)`.
pub fn who(s: &Suspect) -> String {
    let user = s
        .user
        .as_ref()
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    if s.stream_top {
        format!("PID {} another stream-top{user}", s.pid)
    } else {
        format!("PID {} {}{user}", s.pid, s.comm)
    }
}

/// The evidence against a suspect: `CPU 0→95 %, faults 50k/s, RSS +102.4 MiB/s, on our CPUs,
/// 8.0 GB/s measured (resctrl batch)`.
pub fn evidence(s: &Suspect) -> String {
    let mut parts = vec![format!("CPU {:.0}→{:.0} %", s.cpu_before_pct, s.cpu_pct)];
    if s.faults_per_s >= 1.0 {
        parts.push(format!("faults {}", per_second(s.faults_per_s)));
    }
    if let Some(g) = s.rss_growth_per_s.filter(|g| g.abs() >= (1 << 20) as f64) {
        let sign = if g < 0.0 { "−" } else { "+" };
        parts.push(format!("RSS {sign}{}/s", format_bytes(g.abs() as u64)));
    }
    if s.on_our_cpus {
        parts.push("on our CPUs".into());
    } else if s.on_our_node {
        parts.push("on our node".into());
    }
    if let (Some(b), Some(g)) = (s.measured_bytes_per_s, &s.group) {
        parts.push(format!("{} GB/s measured (resctrl {g})", gbs(b / 1e9)));
    }
    if s.exited {
        parts.push("exited".into());
    }
    parts.join(", ")
}

/// `measured` when resctrl measured a suspect's bandwidth, else `inferred`.
pub fn basis(suspects: &[Suspect]) -> &'static str {
    if suspects.iter().any(|s| s.measured_bytes_per_s.is_some()) {
        "measured"
    } else {
        "inferred"
    }
}

/// `suspects (inferred): PID 4242 memhog (alice) CPU 0→95 %, …; PID 800 cc1 (bob) …`, at most
/// `n` of them; or what is known instead.
pub fn suspects(list: &[Suspect], n: usize, sampled: bool) -> String {
    if !sampled {
        return "suspects: no process sample yet".into();
    }
    let named: Vec<String> = list
        .iter()
        .filter(|s| s.score > 0.0)
        .take(n)
        .map(|s| format!("{} {}", who(s), evidence(s)))
        .collect();
    if named.is_empty() {
        let busiest = list
            .iter()
            .find(|s| s.meaningful() && !s.exited)
            .map(|s| format!("; busiest {} {}", who(s), evidence(s)))
            .unwrap_or_default();
        format!("no process used more CPU than before{busiest}")
    } else {
        format!("suspects ({}): {}", basis(list), named.join("; "))
    }
}

/// The log line when an episode begins.
pub(crate) fn began(
    cell: &str,
    since: &str,
    ep: &Episode,
    suspects_text: &str,
    host: Option<&HostSample>,
) -> String {
    // What the host says of the CPU we were given: time stolen by the hypervisor, a cgroup's
    // quota throttling us.
    let steal = host
        .and_then(|h| h.steal_pct)
        .map(|s| format!("; steal {s:.1} %"))
        .unwrap_or_default();
    let throttled = host
        .and_then(HostSample::throttling_note)
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    if ep.kind == EpisodeKind::Disturbance {
        return format!(
            "disturbance on {cell} since {since}: {}; {}; {suspects_text}{steal}{throttled}",
            disturbed(ep),
            reference(ep.reference)
        );
    }
    format!(
        "contention on {cell} since {since}: {:.0} % below its {} reference {} GB/s ({} GB/s); {suspects_text}{steal}{throttled}",
        ep.depth() * 100.0,
        ep.reference.map_or("no", |r| r.source.name()),
        gbs(ep.reference.map_or(f64::NAN, |r| r.gbs)),
        gbs(ep.mean_gbs()),
    )
}

/// A disturbance's rounds: `21 of 21 rounds disturbed, t0 off CPU up to 52 %`.
fn disturbed(ep: &Episode) -> String {
    let off = ep
        .worst_off_cpu
        .map(|o| format!(", {} at worst", o.describe()))
        .unwrap_or_default();
    format!(
        "{} of {} rounds disturbed{off}",
        ep.disturbed_rounds, ep.rounds
    )
}

/// `reference 15.5 GB/s (learned)`, or `no calm reference yet`.
pub fn reference(r: Option<Reference>) -> String {
    match r {
        Some(r) => format!("reference {} GB/s ({})", gbs(r.gbs), r.source.name()),
        None => "no calm reference yet".into(),
    }
}

/// The log line each minute while it lasts.
pub(crate) fn lasting(cell: &str, ep: &Episode, d: Duration) -> String {
    let top = ep
        .suspects
        .iter()
        .find(|s| s.score > 0.0 && !s.exited)
        .map(|s| format!("; top suspect {}", who(s)))
        .unwrap_or_default();
    if ep.kind == EpisodeKind::Disturbance {
        return format!(
            "disturbance on {cell} lasts: {} so far, {}{top}",
            duration(d),
            disturbed(ep)
        );
    }
    format!(
        "contention on {cell} lasts: {} so far, {:.0} % below reference {} GB/s{top}",
        duration(d),
        ep.depth() * 100.0,
        gbs(ep.reference.map_or(f64::NAN, |r| r.gbs)),
    )
}

/// The log line when it ends.
pub fn ended(cell: &str, span: &str, ep: &Episode, d: Duration, suspects_text: &str) -> String {
    if ep.kind == EpisodeKind::Disturbance {
        let how = if ep.cut_short {
            "cut short by a reset"
        } else if ep.superseded {
            "became contention"
        } else {
            "over"
        };
        return format!(
            "disturbance on {cell} {how} after {} ({span}): {}; {suspects_text}",
            duration(d),
            disturbed(ep)
        );
    }
    let how = if ep.cut_short {
        "cut short by a new reference"
    } else {
        "over"
    };
    format!(
        "contention on {cell} {how} after {} ({span}): {:.0} % below reference {} GB/s on average, {:.0} % at worst; {suspects_text}",
        duration(d),
        ep.depth() * 100.0,
        gbs(ep.reference.map_or(f64::NAN, |r| r.gbs)),
        ep.worst_depth() * 100.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_clock() {
        assert_eq!(duration(Duration::from_secs(45)), "45 s");
        assert_eq!(duration(Duration::from_secs(65)), "1 min 05 s");
        assert_eq!(duration(Duration::from_secs(7380)), "2 h 03 min");
    }

    #[test]
    fn rates_per_second_stay_short() {
        assert_eq!(per_second(850.0), "850/s");
        assert_eq!(per_second(1500.0), "1.5k/s");
        assert_eq!(per_second(50_000.0), "50k/s");
        assert_eq!(per_second(3.4e6), "3.4M/s");
    }
}
