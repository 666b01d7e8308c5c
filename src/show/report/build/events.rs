//! What the live monitor saw, for its snapshot: the contention episodes with their suspects,
//! and the event log.

use crate::engine::plan::Grid;
use crate::judge::watch::contention::Episode;
use crate::judge::watch::log::{Entry, Kind};
use crate::judge::watch::narrative;
use crate::judge::watch::suspects::Suspect;
use crate::show::report::model::{self as wire, Snapshot};
use std::time::{Instant, SystemTime};

impl Snapshot {
    /// Adds what the live monitor saw: its contention episodes (times from `wall`, durations
    /// of open ones to `now`) and its event log.
    pub fn with_events<'a>(
        mut self,
        grid: &Grid,
        episodes: impl IntoIterator<Item = &'a Episode>,
        log: impl IntoIterator<Item = &'a Entry>,
        wall: impl Fn(Instant) -> SystemTime,
        now: Instant,
    ) -> Snapshot {
        let utc = |t: Instant| crate::base::time::rfc3339_at(wall(t));
        self.contention = episodes
            .into_iter()
            // Contention only: a disturbance is not judged against a reference.
            .filter_map(|e| Some((e, e.against()?)))
            .map(|(e, reference)| wire::Episode {
                set_label: grid
                    .sets
                    .get(e.cell.set)
                    .map(|s| s.label())
                    .unwrap_or_default(),
                threads: e.cell.threads,
                rerun: e.cell.rerun,
                start: utc(e.started),
                end: e.ended.map(utc),
                duration_s: e.duration(now).as_secs_f64(),
                cut_short: e.cut_short,
                reference_gbs: reference.gbs,
                reference_source: reference.source.name().into(),
                mean_gbs: e.mean_gbs(),
                worst_gbs: e.worst_gbs,
                depth: e.depth(),
                worst_depth: e.worst_depth(),
                rounds: e.rounds,
                basis: narrative::basis(&e.suspects).into(),
                suspects: e.suspects.iter().map(Into::into).collect(),
            })
            .collect();
        self.log = log
            .into_iter()
            .map(|e| wire::LogLine {
                time: e.time.clone(),
                kind: kind_name(e.kind).into(),
                text: e.text.clone(),
                count: e.count,
            })
            .collect();
        self
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Info => "info",
        Kind::Late => "late",
        Kind::Contention => "contention",
        Kind::Choice => "choice",
        Kind::Checksum => "checksum",
        Kind::Export => "export",
        Kind::Error => "error",
    }
}

impl From<&Suspect> for wire::Suspect {
    fn from(s: &Suspect) -> wire::Suspect {
        let Suspect {
            pid,
            comm,
            user,
            stream_top,
            cpu_before_pct,
            cpu_pct,
            faults_per_s,
            rss_growth_per_s,
            on_our_cpus,
            on_our_node,
            measured_bytes_per_s,
            group,
            score,
            exited: _,
        } = s;
        wire::Suspect {
            pid: *pid,
            comm: comm.clone(),
            user: user.clone(),
            stream_top: *stream_top,
            cpu_before_cores: *cpu_before_pct / 100.0,
            cpu_cores: *cpu_pct / 100.0,
            faults_per_s: *faults_per_s,
            rss_growth_bytes_per_s: *rss_growth_per_s,
            on_our_cpus: *on_our_cpus,
            on_our_node: *on_our_node,
            measured_bytes_per_s: *measured_bytes_per_s,
            resctrl_group: group.clone(),
            score: *score,
        }
    }
}
