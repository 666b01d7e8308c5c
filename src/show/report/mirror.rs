//! The snapshot's copies of the run's types, mapped both ways in one place.
//!
//! The wire model (model/) keeps its own copy of each engine, machine and statistics type it
//! holds, so that a change there cannot change the schema behind our back. build/ maps the run's
//! types into the copies; lines.rs maps the copies back, to word them as the live view does. Each
//! pair is listed here once: an enum's variants in one `both_ways!` line (a variant added on
//! either side stops the build here), a struct's two conversions side by side. What only one
//! direction needs (figures, rounds, the run's description) stays in build/.

use super::model as wire;
use crate::engine::events::{By, PagePlacement};
use crate::engine::kernel::{Isa, Stores};
use crate::engine::plan::{ArraySize, Level, WorkingSet};
use crate::judge::no_effect::Setting;
use crate::judge::stats::CycleSource;
use crate::machine::cpu_id::CpuId;
use crate::machine::host::{HostSample, HostState, MemPressure};
use crate::machine::topology::{Cache, CacheKind, CoreKind, Cpu, NumaNode, PinPolicy, Topology};
use crate::machine::vendor::VendorSource;

/// `From` both ways between a wire enum and the run's enum with the same unit variants.
macro_rules! both_ways {
    ($wire:ty, $run:ty: $($variant:ident),+ $(,)?) => {
        impl From<$run> for $wire {
            fn from(v: $run) -> $wire {
                type Run = $run;
                type Wire = $wire;
                match v {
                    $(Run::$variant => Wire::$variant,)+
                }
            }
        }

        impl From<$wire> for $run {
            fn from(v: $wire) -> $run {
                type Run = $run;
                type Wire = $wire;
                match v {
                    $(Wire::$variant => Run::$variant,)+
                }
            }
        }
    };
}

both_ways!(wire::Level, Level: L1, L2, L3, Dram);
both_ways!(wire::Isa, Isa: Avx512, Avx2, Sse2, Neon, Portable);
both_ways!(wire::Stores, Stores: Normal, Nt);
both_ways!(wire::ChoiceBy, By: Trial, Rule, Pinned, Only, Reused);
both_ways!(wire::PinPolicy, PinPolicy: Spread, Compact, None);
both_ways!(wire::CoreKind, CoreKind: Uniform, Performance, Efficiency);
both_ways!(wire::CacheKind, CacheKind: Data, Instruction, Unified);
both_ways!(wire::MemPressure, MemPressure: Normal, Warning, Critical);
both_ways!(wire::VendorSource, VendorSource: Flag, Smbios, Table, None);
both_ways!(wire::CycleSource, CycleSource: Counted, ClockEstimate);
both_ways!(wire::Setting, Setting: Pin, HugePages);

impl From<ArraySize> for wire::ArraySize {
    fn from(s: ArraySize) -> wire::ArraySize {
        match s {
            ArraySize::PerThread(b) => wire::ArraySize::PerThread(b),
            ArraySize::Split(b) => wire::ArraySize::Split(b),
        }
    }
}

impl From<wire::ArraySize> for ArraySize {
    fn from(s: wire::ArraySize) -> ArraySize {
        match s {
            wire::ArraySize::PerThread(b) => ArraySize::PerThread(b),
            wire::ArraySize::Split(b) => ArraySize::Split(b),
        }
    }
}

/// A set without the machine: `lands_in` is left for build/'s grid to fill.
impl From<&WorkingSet> for wire::WorkingSet {
    fn from(s: &WorkingSet) -> wire::WorkingSet {
        let WorkingSet {
            name,
            level,
            size,
            note,
        } = s;
        wire::WorkingSet {
            name: name.clone(),
            level: level.map(Into::into),
            size: (*size).into(),
            note: note.clone(),
            lands_in: None,
        }
    }
}

/// The engine's set, for its label: where an explicit size lands is the machine's to say.
impl From<&wire::WorkingSet> for WorkingSet {
    fn from(s: &wire::WorkingSet) -> WorkingSet {
        let wire::WorkingSet {
            name,
            level,
            size,
            note,
            lands_in: _,
        } = s;
        WorkingSet {
            name: name.clone(),
            level: level.map(Into::into),
            size: (*size).into(),
            note: note.clone(),
        }
    }
}

impl From<&HostState> for wire::HostState {
    fn from(h: &HostState) -> wire::HostState {
        let HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure,
        } = *h;
        wire::HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure: mem_pressure.map(Into::into),
        }
    }
}

impl From<&wire::HostState> for HostState {
    fn from(h: &wire::HostState) -> HostState {
        let wire::HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure,
        } = *h;
        HostState {
            load,
            mem_total,
            mem_available,
            swap_total,
            swap_used,
            anon_huge,
            compressor,
            mem_pressure: mem_pressure.map(Into::into),
        }
    }
}

impl From<&PagePlacement> for wire::Pages {
    fn from(p: &PagePlacement) -> wire::Pages {
        let PagePlacement {
            sampled,
            meant,
            on_meant,
            by_node,
            absent,
        } = p;
        wire::Pages {
            sampled: *sampled,
            meant: *meant,
            on_meant: *on_meant,
            by_node: by_node.clone(),
            absent: *absent,
        }
    }
}

impl From<&wire::Pages> for PagePlacement {
    fn from(p: &wire::Pages) -> PagePlacement {
        let wire::Pages {
            sampled,
            meant,
            on_meant,
            by_node,
            absent,
        } = p;
        PagePlacement {
            sampled: *sampled,
            meant: *meant,
            on_meant: *on_meant,
            by_node: by_node.clone(),
            absent: *absent,
        }
    }
}

impl From<&Topology> for wire::Topology {
    fn from(t: &Topology) -> wire::Topology {
        // Whether the last-level cache is hidden shows in the dram set's size and note.
        let Topology {
            model,
            cpus,
            caches,
            nodes,
            llc_hidden: _,
            cpu,
        } = t;
        wire::Topology {
            model: model.clone(),
            cpus: cpus.iter().map(Into::into).collect(),
            caches: caches.iter().map(Into::into).collect(),
            nodes: nodes.iter().map(Into::into).collect(),
            cpu: cpu.as_ref().map(Into::into),
        }
    }
}

/// The machine module's topology of a snapshot's, for its wording and its cache arithmetic.
impl From<&wire::Topology> for Topology {
    fn from(t: &wire::Topology) -> Topology {
        let wire::Topology {
            model,
            cpus,
            caches,
            nodes,
            cpu,
        } = t;
        Topology {
            model: model.clone(),
            cpus: cpus.iter().map(Into::into).collect(),
            caches: caches.iter().map(Into::into).collect(),
            nodes: nodes.iter().map(Into::into).collect(),
            // Wording only: the summaries do not depend on it.
            llc_hidden: false,
            cpu: cpu.as_ref().map(Into::into),
        }
    }
}

impl From<&CpuId> for wire::CpuDesign {
    fn from(c: &CpuId) -> wire::CpuDesign {
        match c.clone() {
            CpuId::X86 {
                vendor,
                family,
                model,
                stepping,
            } => wire::CpuDesign::X86 {
                vendor,
                family,
                model,
                stepping,
            },
            CpuId::Arm {
                implementer,
                part,
                variant,
                revision,
            } => wire::CpuDesign::Arm {
                implementer,
                part,
                variant,
                revision,
            },
            CpuId::Apple { cpufamily, brand } => wire::CpuDesign::Apple { cpufamily, brand },
        }
    }
}

impl From<&wire::CpuDesign> for CpuId {
    fn from(c: &wire::CpuDesign) -> CpuId {
        match c.clone() {
            wire::CpuDesign::X86 {
                vendor,
                family,
                model,
                stepping,
            } => CpuId::X86 {
                vendor,
                family,
                model,
                stepping,
            },
            wire::CpuDesign::Arm {
                implementer,
                part,
                variant,
                revision,
            } => CpuId::Arm {
                implementer,
                part,
                variant,
                revision,
            },
            wire::CpuDesign::Apple { cpufamily, brand } => CpuId::Apple { cpufamily, brand },
        }
    }
}

impl From<&Cpu> for wire::Cpu {
    fn from(c: &Cpu) -> wire::Cpu {
        let Cpu {
            id,
            package,
            core,
            node,
            smt_siblings,
            kind,
        } = c;
        wire::Cpu {
            id: *id,
            package: *package,
            core: *core,
            node: *node,
            smt_siblings: smt_siblings.clone(),
            kind: (*kind).into(),
        }
    }
}

impl From<&wire::Cpu> for Cpu {
    fn from(c: &wire::Cpu) -> Cpu {
        let wire::Cpu {
            id,
            package,
            core,
            node,
            smt_siblings,
            kind,
        } = c;
        Cpu {
            id: *id,
            package: *package,
            core: *core,
            node: *node,
            smt_siblings: smt_siblings.clone(),
            kind: (*kind).into(),
        }
    }
}

impl From<&Cache> for wire::Cache {
    fn from(c: &Cache) -> wire::Cache {
        let Cache {
            level,
            kind,
            size,
            cpus,
        } = c;
        wire::Cache {
            level: *level,
            kind: (*kind).into(),
            size: *size,
            cpus: cpus.clone(),
        }
    }
}

impl From<&wire::Cache> for Cache {
    fn from(c: &wire::Cache) -> Cache {
        let wire::Cache {
            level,
            kind,
            size,
            cpus,
        } = c;
        Cache {
            level: *level,
            kind: (*kind).into(),
            size: *size,
            cpus: cpus.clone(),
        }
    }
}

impl From<&NumaNode> for wire::NumaNode {
    fn from(n: &NumaNode) -> wire::NumaNode {
        let NumaNode { id, cpus } = n;
        wire::NumaNode {
            id: *id,
            cpus: cpus.clone(),
        }
    }
}

impl From<&wire::NumaNode> for NumaNode {
    fn from(n: &wire::NumaNode) -> NumaNode {
        let wire::NumaNode { id, cpus } = n;
        NumaNode {
            id: *id,
            cpus: cpus.clone(),
        }
    }
}

/// The recording's copy of a host sample: what the host panel and the statistics take from one,
/// as a recording's host frames hold it (JSON, so that a field added later reads back as its
/// default). Its fields are listed once, here, for the type and both of its conversions; what
/// the copy leaves out (the other processes, the throttling counters) is the sample's default.
macro_rules! host_wire {
    ($($field:ident: $ty:ty),+ $(,)?) => {
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct HostWire {
            $(pub $field: $ty,)+
        }

        impl From<&HostSample> for HostWire {
            fn from(h: &HostSample) -> HostWire {
                HostWire { $($field: h.$field,)+ }
            }
        }

        impl From<&HostWire> for HostSample {
            fn from(h: &HostWire) -> HostSample {
                HostSample { $($field: h.$field,)+ ..HostSample::default() }
            }
        }
    };
}

host_wire!(
    load: [f64; 3], mem_available: u64, mem_total: u64, swap_total: u64, swap_used: u64,
    has_rates: bool, elapsed_s: f64, swap_in_per_s: Option<f64>, swap_out_per_s: Option<f64>,
    cpu_some_avg10: Option<f64>, mem_some_avg10: Option<f64>, mem_full_avg10: Option<f64>,
    steal_pct: Option<f64>, others_cpu_pct: Option<f64>, cpu_quota: Option<f64>,
    throttled_ratio: Option<f64>,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topology_and_a_host_reading_come_back_as_they_went() {
        let topology = Topology {
            model: "Test CPU".into(),
            cpus: vec![Cpu {
                id: 3,
                package: 0,
                core: 1,
                node: 0,
                smt_siblings: vec![3, 7],
                kind: CoreKind::Efficiency,
            }],
            caches: vec![Cache {
                level: 2,
                kind: CacheKind::Unified,
                size: 1 << 20,
                cpus: vec![3, 7],
            }],
            nodes: vec![NumaNode {
                id: 0,
                cpus: vec![3, 7],
            }],
            llc_hidden: false,
            cpu: Some(CpuId::X86 {
                vendor: "AuthenticAMD".into(),
                family: 25,
                model: 1,
                stepping: Some(1),
            }),
        };
        assert_eq!(Topology::from(&wire::Topology::from(&topology)), topology);
        let host = HostState {
            load: [0.5, 0.25, 0.125],
            mem_total: 64 << 30,
            mem_available: 2 << 30,
            swap_total: 0,
            swap_used: 0,
            anon_huge: None,
            compressor: Some(1 << 30),
            mem_pressure: Some(MemPressure::Warning),
        };
        assert_eq!(HostState::from(&wire::HostState::from(&host)), host);
        for level in [Level::L1, Level::L2, Level::L3, Level::Dram] {
            assert_eq!(Level::from(wire::Level::from(level)), level);
        }
    }
}
