//! The run's description for the snapshot: its settings, kernel, clock, vendor figure,
//! counters and the settings that changed nothing.

use crate::base::time::as_rfc3339;
use crate::engine::kernel::Kernel;
use crate::engine::plan::{HugePages, Loops};
use crate::judge::no_effect::NoEffect;
use crate::judge::run_info::RunInfo;
use crate::machine::clock::ClockEstimate;
use crate::machine::counters::Availability;
use crate::machine::vendor::VendorFigure;
use crate::show::report::model as wire;

impl From<&RunInfo> for wire::RunInfo {
    fn from(run: &RunInfo) -> wire::RunInfo {
        let RunInfo {
            version,
            name,
            command_line,
            hostname,
            started,
            topology,
            kernel,
            loops,
            huge_pages_flag,
            choices_from,
            pin,
            clock,
            vendor,
            host_start,
            rounds,
            round_ms,
            duty,
            container,
            placement,
            huge_pages,
            no_effect,
            counters,
            numa,
            matrix: _,
            not_a_measurement,
            threads_note,
            fingerprint,
        } = run;
        wire::RunInfo {
            version: version.clone(),
            name: name.clone(),
            command_line: command_line.clone(),
            hostname: hostname.clone(),
            started: as_rfc3339(started),
            topology: topology.into(),
            kernel: (*kernel).into(),
            selection: selection(*kernel, *loops, *huge_pages_flag),
            choices_from: choices_from.clone(),
            pin: (*pin).into(),
            clock: clock.into(),
            vendor: vendor.into(),
            host_start: host_start.into(),
            rounds: *rounds,
            round_ms: *round_ms,
            duty: f64::from(*duty) / 100.0,
            container: container.map(|c| wire::Container {
                memory_limit: c.memory_limit,
                cpu_quota: c.cpu_quota,
            }),
            placement: placement.map(str::to_string),
            huge_pages: huge_pages.map(str::to_string),
            no_effect: no_effect.iter().map(Into::into).collect(),
            counters: counters.as_ref().map(counter_info),
            numa: numa.clone(),
            not_a_measurement: not_a_measurement.clone(),
            threads_note: threads_note.clone(),
            fingerprint: fingerprint.clone(),
        }
    }
}

/// `--kernel` and `--huge-pages` for the snapshot: None for an instruction set with huge pages
/// on, the one setting files from before the choice could have (and so still byte for byte).
fn selection(kernel: Kernel, loops: Loops, huge_pages: HugePages) -> Option<wire::Selection> {
    (loops != Loops::Default || huge_pages != HugePages::On).then(|| wire::Selection {
        kernel: loops.setting(kernel),
        huge_pages: huge_pages.to_string(),
    })
}

impl From<&NoEffect> for wire::NoEffect {
    fn from(n: &NoEffect) -> wire::NoEffect {
        let NoEffect { setting, text } = n;
        wire::NoEffect {
            setting: (*setting).into(),
            text: text.clone(),
        }
    }
}

fn counter_info(a: &Availability) -> wire::CounterInfo {
    let names = |cs: &[crate::machine::counters::Counter]| {
        cs.iter().map(|c| c.name().to_string()).collect::<Vec<_>>()
    };
    wire::CounterInfo {
        counted: names(&a.counted),
        missing: a
            .missing
            .iter()
            .map(|(cs, why)| wire::MissingCounters {
                counters: names(cs),
                reason: why.clone(),
            })
            .collect(),
    }
}

impl From<Kernel> for wire::Kernel {
    fn from(k: Kernel) -> wire::Kernel {
        let Kernel { isa, stores } = k;
        wire::Kernel {
            isa: isa.into(),
            stores: stores.into(),
        }
    }
}

impl From<&ClockEstimate> for wire::ClockEstimate {
    fn from(c: &ClockEstimate) -> wire::ClockEstimate {
        let ClockEstimate {
            ghz,
            check_ghz,
            agree,
            method,
            counted_ghz,
        } = c;
        wire::ClockEstimate {
            ghz: *ghz,
            check_ghz: *check_ghz,
            agree: *agree,
            method: method.clone(),
            counted_ghz: counted_ghz.filter(|g| g.is_finite()),
        }
    }
}

impl From<&VendorFigure> for wire::VendorFigure {
    fn from(v: &VendorFigure) -> wire::VendorFigure {
        let VendorFigure { gbs, kind, source } = v;
        wire::VendorFigure {
            gbs: *gbs,
            source: (*kind).into(),
            source_text: source.clone(),
        }
    }
}
