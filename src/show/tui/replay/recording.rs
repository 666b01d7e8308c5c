//! A recording read: its frames, the first session's description, its span, whether the
//! watch's changes were recorded and where they declared each contention episode, and how the
//! monitor's header words the recorded run.

use super::super::app::Header;
use crate::base::error::{Error, Result};
use crate::judge::watch::contention::EpisodeKind;
use crate::machine::topology::Topology;
use crate::show::record::format::{Body, Header as Recorded, WatchWire};
use crate::show::record::reader::{Damage, Frames};
use std::path::PathBuf;

/// A recording's frames and what the cursor needs of them.
pub struct Recording {
    pub(super) frames: Frames,
    /// The first recorded session's description.
    pub(super) first_header: Box<Recorded>,
    /// The first frame's time and the last's, ms since the epoch.
    pub(super) start_ms: u64,
    pub(super) end_ms: u64,
    /// The file names, for the header.
    pub(super) name: String,
    /// The recording holds the watch's changes: its episodes are the recorded ones.
    pub(super) episodes_recorded: bool,
    /// Where the recorded watch declared each contention episode, ms, in order.
    pub(super) recorded_episodes: Vec<u64>,
    pub(super) damage: Damage,
}

impl Recording {
    /// The frames of `files` (sorted), named for the header.
    pub fn read(files: &[PathBuf]) -> Result<Recording> {
        let frames = Frames::open(files)?;
        let name = files
            .iter()
            .map(|f| {
                f.file_name()
                    .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect::<Vec<_>>()
            .join(", ");
        Recording::of(frames, name)
    }

    /// A recording of these frames (sorted by time): one pass over them finds its first
    /// session, whether the watch's changes were recorded, and the contention episodes they
    /// declared.
    pub fn of(frames: Frames, name: String) -> Result<Recording> {
        let (mut first_header, mut episodes_recorded) = (None, false);
        let mut recorded_episodes = Vec::new();
        for f in frames.iter() {
            match f.body {
                Body::Header(h) if first_header.is_none() => first_header = Some(h),
                Body::Watch(w) => {
                    episodes_recorded = true;
                    if w.change == "began" && is_contention(&w) {
                        recorded_episodes.push(f.t_ms);
                    }
                }
                _ => {}
            }
        }
        let first_header = first_header.ok_or_else(|| {
            Error::usage("replay: no recorded session in the files (no header frame)")
        })?;
        let start_ms = frames.t_ms(0).unwrap_or(0);
        let end_ms = frames.t_ms(frames.len().saturating_sub(1)).unwrap_or(0);
        let damage = frames.damage();
        Ok(Recording {
            frames,
            first_header,
            start_ms,
            end_ms,
            name,
            episodes_recorded,
            recorded_episodes,
            damage,
        })
    }
}

/// The monitor's header lines from a recorded run's description.
pub(super) fn header_of(h: &Recorded) -> Header {
    let info = &h.frame.info;
    let topo = Topology::from(&info.topology);
    Header {
        machine: format!("{} · {} · {}", info.hostname, topo.model, topo.summary()),
        caches: format!("caches {}", topo.cache_summary()),
        run: format!(
            "kernel {} · {} stores · pin {} · clock {:.2} GHz · duty {:.0} %",
            lower(info.kernel.isa),
            lower(info.kernel.stores),
            lower(info.pin),
            info.clock.ghz,
            info.duty * 100.0
        ),
        vendor: match info.vendor.gbs {
            Some(g) => format!("vendor {g:.1} GB/s ({})", info.vendor.source_text),
            None => format!("vendor figure unknown ({})", info.vendor.source_text),
        },
    }
}

/// A setting's name as the header words it: `avx2`, `spread`.
fn lower(v: impl std::fmt::Debug) -> String {
    format!("{v:?}").to_lowercase()
}

fn is_contention(w: &WatchWire) -> bool {
    w.episode
        .as_ref()
        .is_some_and(|e| e.kind == EpisodeKind::Contention.name())
}

/// The duty the run had, in percent.
pub(super) fn duty_of(h: &Recorded) -> u8 {
    (h.frame.info.duty * 100.0).round().clamp(1.0, 100.0) as u8
}
