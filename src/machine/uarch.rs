//! What a core's load and store ports allow per cycle: one table of known core designs, and the
//! bytes per cycle a loop over arrays can move through those ports at its vector width.
//!
//! Each row gives, per vector width the core has, the loads and the stores it can issue per
//! cycle (each moving one vector), and where loads and stores share pipes, how many memory
//! operations of either kind it can issue together. The figure is a ceiling for data in L1:
//! below L1 the caches and the memory deliver less, and a figure's fraction of it says how far
//! that level sits below the core's own ports. The sources are the vendors' optimisation
//! guides and the independent measurements named in each row.

use super::cpu_id::CpuId;

/// Why no port limit can be given, in words for the reader (`–` stands for it in tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown(pub String);

/// One vector width of a core: what its ports issue per cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ports {
    /// Bytes each load or store moves (16 for SSE and NEON, 32 for AVX2, 64 for AVX-512).
    pub width: u32,
    /// Loads per cycle of this width.
    pub loads: f64,
    /// Stores per cycle of this width.
    pub stores: f64,
    /// Loads and stores together per cycle, where they share pipes; None where the load and
    /// store limits are the only ones.
    pub memory_ops: Option<f64>,
}

/// A core design and its ports at each vector width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Core {
    /// The design's name, e.g. `AMD Zen 3`.
    pub name: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    pub ports: &'static [Ports],
    matches: Match,
}

/// How a core design is recognised.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Match {
    /// An x86 vendor string, a family and the models (inclusive ranges) of that family.
    X86(&'static str, u32, &'static [(u32, u32)]),
    /// An Arm MIDR implementer and primary part number.
    Arm(u32, u32),
    /// An Apple chip's `hw.cpufamily`.
    Apple(u32),
}

const fn ports(width: u32, loads: f64, stores: f64, memory_ops: Option<f64>) -> Ports {
    Ports {
        width,
        loads,
        stores,
        memory_ops,
    }
}

const INTEL_MANUAL: &str = "Intel 64 and IA-32 Architectures Optimization Reference Manual";
const AMD_19H: &str = "AMD Software Optimization Guide for AMD Family 19h Processors";

/// Every core design the limit is known for.
const CORES: &[Core] = &[
    // Two loads and one store per cycle at every width up to 256 bits (the manual's Haswell and
    // Skylake chapters: "two 256-bit loads and one 256-bit store per cycle").
    Core {
        name: "Intel Haswell/Broadwell",
        source: INTEL_MANUAL,
        ports: &[ports(16, 2.0, 1.0, None), ports(32, 2.0, 1.0, None)],
        matches: Match::X86(
            "GenuineIntel",
            6,
            &[(60, 61), (63, 63), (69, 71), (79, 79), (86, 86)],
        ),
    },
    Core {
        name: "Intel Skylake (client)",
        source: INTEL_MANUAL,
        ports: &[ports(16, 2.0, 1.0, None), ports(32, 2.0, 1.0, None)],
        matches: Match::X86(
            "GenuineIntel",
            6,
            &[(78, 78), (94, 94), (142, 142), (158, 158), (165, 166)],
        ),
    },
    // Skylake-SP, Cascade Lake, Cooper Lake: the same two loads and a store, at 512 bits too.
    Core {
        name: "Intel Skylake-SP",
        source: INTEL_MANUAL,
        ports: &[
            ports(16, 2.0, 1.0, None),
            ports(32, 2.0, 1.0, None),
            ports(64, 2.0, 1.0, None),
        ],
        matches: Match::X86("GenuineIntel", 6, &[(85, 85)]),
    },
    // Sunny Cove and Willow Cove: two loads per cycle of any width; two stores per cycle up to
    // 256 bits, one at 512 (64 bytes of stores per cycle).
    Core {
        name: "Intel Ice Lake/Tiger Lake (Sunny/Willow Cove)",
        source: INTEL_MANUAL,
        ports: &[
            ports(16, 2.0, 2.0, None),
            ports(32, 2.0, 2.0, None),
            ports(64, 2.0, 1.0, None),
        ],
        matches: Match::X86(
            "GenuineIntel",
            6,
            &[(106, 106), (108, 108), (125, 126), (140, 141)],
        ),
    },
    // Golden Cove and Raptor Cove in Sapphire and Emerald Rapids: three loads per cycle up to
    // 256 bits, two at 512; two stores up to 256 bits, one at 512.
    Core {
        name: "Intel Sapphire/Emerald Rapids (Golden/Raptor Cove)",
        source: INTEL_MANUAL,
        ports: &[
            ports(16, 3.0, 2.0, None),
            ports(32, 3.0, 2.0, None),
            ports(64, 2.0, 1.0, None),
        ],
        matches: Match::X86("GenuineIntel", 6, &[(143, 143), (207, 207)]),
    },
    // Zen 2: two 256-bit loads and one 256-bit store per cycle.
    Core {
        name: "AMD Zen 2",
        source: "AMD Software Optimization Guide for AMD Family 17h Models 30h and Greater",
        ports: &[ports(16, 2.0, 1.0, None), ports(32, 2.0, 1.0, None)],
        matches: Match::X86(
            "AuthenticAMD",
            23,
            &[(49, 49), (96, 96), (104, 104), (113, 113), (144, 144)],
        ),
    },
    // Zen 3: three memory operations per cycle, of which vector loads two and vector stores one,
    // at any width up to 256 bits.
    Core {
        name: "AMD Zen 3",
        source: AMD_19H,
        ports: &[
            ports(16, 2.0, 1.0, Some(3.0)),
            ports(32, 2.0, 1.0, Some(3.0)),
        ],
        matches: Match::X86(
            "AuthenticAMD",
            25,
            &[(0x00, 0x0f), (0x20, 0x2f), (0x40, 0x5f)],
        ),
    },
    // Zen 4: as Zen 3 up to 256 bits; a 512-bit load or store takes both halves of the 256-bit
    // data path, so one 512-bit load per cycle and one 512-bit store every other cycle.
    Core {
        name: "AMD Zen 4",
        source: AMD_19H,
        ports: &[
            ports(16, 2.0, 1.0, Some(3.0)),
            ports(32, 2.0, 1.0, Some(3.0)),
            ports(64, 1.0, 0.5, None),
        ],
        matches: Match::X86(
            "AuthenticAMD",
            25,
            &[(0x10, 0x1f), (0x60, 0x7f), (0xa0, 0xaf)],
        ),
    },
    // Neoverse N1: two load/store pipes, each a 128-bit load or a store; one store per cycle.
    Core {
        name: "Arm Neoverse N1",
        source: "Arm Neoverse N1 Software Optimization Guide",
        ports: &[ports(16, 2.0, 1.0, Some(2.0))],
        matches: Match::Arm(0x41, 0xd0c),
    },
    // Neoverse V1: two load/store pipes and a load pipe: three 128-bit loads or two 256-bit
    // SVE loads per cycle; two 128-bit stores or one 256-bit store.
    Core {
        name: "Arm Neoverse V1",
        source: "Arm Neoverse V1 Software Optimization Guide",
        ports: &[
            ports(16, 3.0, 2.0, Some(3.0)),
            ports(32, 2.0, 1.0, Some(3.0)),
        ],
        matches: Match::Arm(0x41, 0xd40),
    },
    // Firestorm (M1 P-core): four load/store units, of which three load and two store.
    Core {
        name: "Apple M1 (Firestorm P-core)",
        source: "Dougall Johnson, Apple Microarchitecture Research (Firestorm)",
        ports: &[ports(16, 3.0, 2.0, Some(4.0))],
        matches: Match::Apple(0x1b58_8bb3),
    },
];

impl Core {
    /// The core design `cpu` is, or why it cannot be named.
    pub fn of(cpu: Option<&CpuId>) -> Result<&'static Core, Unknown> {
        let Some(cpu) = cpu else {
            return Err(Unknown("the CPU design was not read".into()));
        };
        if let CpuId::Apple {
            cpufamily: None, ..
        } = cpu
        {
            return Err(Unknown("the Mac does not list hw.cpufamily".into()));
        }
        CORES
            .iter()
            .find(|core| core.matches(cpu))
            .ok_or_else(|| Unknown(format!("{cpu} is not in the table of cores")))
    }

    fn matches(&self, cpu: &CpuId) -> bool {
        match (self.matches, cpu) {
            (
                Match::X86(vendor, family, models),
                CpuId::X86 {
                    vendor: v,
                    family: f,
                    model,
                    ..
                },
            ) => {
                vendor == v
                    && family == *f
                    && models.iter().any(|&(lo, hi)| (lo..=hi).contains(model))
            }
            (
                Match::Arm(implementer, part),
                CpuId::Arm {
                    implementer: i,
                    part: p,
                    ..
                },
            ) => implementer == *i && part == *p,
            (Match::Apple(family), CpuId::Apple { cpufamily, .. }) => *cpufamily == Some(family),
            _ => false,
        }
    }

    /// The bytes per cycle the ports allow a loop that, per element, reads `reads` arrays and
    /// writes `writes`, moving `width` bytes per load and store; None where the core has no
    /// such width (or the loop touches no array).
    pub fn bytes_per_cycle(&self, width: u32, reads: u32, writes: u32) -> Option<f64> {
        let p = self.ports.iter().find(|p| p.width == width)?;
        let (r, w) = (f64::from(reads), f64::from(writes));
        // Vectors of elements per cycle: each needs one load per array read and one store per
        // array written.
        let by = |limit: f64, per: f64| {
            if per > 0.0 {
                limit / per
            } else {
                f64::INFINITY
            }
        };
        let vectors = by(p.loads, r)
            .min(by(p.stores, w))
            .min(p.memory_ops.map_or(f64::INFINITY, |m| by(m, r + w)));
        vectors
            .is_finite()
            .then(|| vectors * f64::from(width) * (r + w))
    }
}

/// The bytes each load and store of a loop moves, from the register its name says it uses
/// (`avx512 zmm`, `avx2 ymm fma`, `sse2-nt xmm`, `neon q`), or why it cannot say.
pub fn vector_width(variant: &str) -> Result<u32, Unknown> {
    let words: Vec<&str> = variant.split_whitespace().collect();
    if words.contains(&"zmm") {
        Ok(64)
    } else if words.contains(&"ymm") {
        Ok(32)
    } else if words.contains(&"xmm") || words.contains(&"q") {
        Ok(16)
    } else if words.first() == Some(&"portable") {
        Err(Unknown(
            "the portable loop's vector width is the compiler's".into(),
        ))
    } else {
        Err(Unknown(format!(
            "the loop `{variant}` names no vector register"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x86(vendor: &str, family: u32, model: u32) -> CpuId {
        CpuId::X86 {
            vendor: vendor.into(),
            family,
            model,
            stepping: None,
        }
    }

    #[test]
    fn the_triad_on_zen_3_is_bound_by_its_one_store() {
        let zen3 = Core::of(Some(&x86("AuthenticAMD", 25, 1))).unwrap();
        assert_eq!(zen3.name, "AMD Zen 3");
        // Two loads and a store per vector of 4 elements: one such vector per cycle.
        assert_eq!(zen3.bytes_per_cycle(32, 2, 1), Some(96.0));
        // Read: two loads of 32 bytes.
        assert_eq!(zen3.bytes_per_cycle(32, 1, 0), Some(64.0));
        assert_eq!(zen3.bytes_per_cycle(64, 2, 1), None);
        assert_eq!(zen3.bytes_per_cycle(32, 0, 0), None);
    }

    #[test]
    fn shared_pipes_bind_where_loads_and_stores_do_not() {
        let m1 = Core::of(Some(&CpuId::Apple {
            cpufamily: Some(0x1b58_8bb3),
            brand: "Apple M1".into(),
        }))
        .unwrap();
        // Copy: a load and a store per vector; three loads and two stores would allow two
        // vectors, four memory operations allow two as well.
        assert_eq!(m1.bytes_per_cycle(16, 1, 1), Some(64.0));
        // Triad: two loads and a store; four operations allow 4/3 vectors.
        assert_eq!(m1.bytes_per_cycle(16, 2, 1), Some(64.0));
    }

    #[test]
    fn unknown_cores_say_why() {
        assert!(
            Core::of(Some(&x86("GenuineIntel", 6, 1)))
                .unwrap_err()
                .0
                .contains("not in the table")
        );
        assert!(Core::of(None).unwrap_err().0.contains("not read"));
        let mac = CpuId::Apple {
            cpufamily: None,
            brand: "Apple M2 Pro".into(),
        };
        assert!(Core::of(Some(&mac)).unwrap_err().0.contains("hw.cpufamily"));
    }

    #[test]
    fn widths_come_from_the_register_a_loop_names() {
        assert_eq!(vector_width("avx512 zmm fma"), Ok(64));
        assert_eq!(vector_width("avx2-nt ymm mul+add"), Ok(32));
        assert_eq!(vector_width("sse2 xmm"), Ok(16));
        assert_eq!(vector_width("neon-nt q"), Ok(16));
        assert!(vector_width("portable").is_err());
    }
}
