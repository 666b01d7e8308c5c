//! What is computed from the cells and kept beside them: the derived table (ratios
//! between cells), the NUMA
//! matrix and a size sweep's cliffs.

use super::grid::ArraySize;
use serde::{Deserialize, Serialize};

/// A drop in GB/s between two neighbouring sizes of a size sweep, and the cache level whose
/// edge it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// The curve's thread count.
    pub threads: usize,
    /// The sizes measured either side of the drop (the sweep's kind: per thread, or split).
    pub below: ArraySize,
    pub above: ArraySize,
    /// Medians of up to three sizes before and after the drop, GB/s.
    pub before_gbs: f64,
    pub after_gbs: f64,
    /// 1 − after ÷ before, a fraction.
    pub drop: f64,
    /// The drop the curve's cliffs had to exceed, a fraction (0.2, more on a noisy curve).
    pub threshold: f64,
    /// The cache level whose edge is nearest (1 is L1d), and its capacity the curve's threads
    /// reach, bytes; null when no edge is within two octaves.
    pub cache_level: Option<u8>,
    pub cache_bytes: Option<u64>,
    /// Where three arrays fill that level, in the sweep's kind; null with `cache_level`.
    pub edge: Option<ArraySize>,
    /// The drop is before the sweep's last size: one size past it, so a wider range confirms.
    pub at_end: bool,
    /// In words: `L2 edge between 128 KiB and 181 KiB per thread`.
    pub text: String,
}

/// The NUMA bandwidth matrix (`--matrix`): every CPU node × memory node pair, all cores of the
/// CPU node streaming a dram-sized set bound to the memory node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Threads of each pair (the cores of a CPU node).
    pub(crate) threads: usize,
    pub cpu_nodes: Vec<usize>,
    pub mem_nodes: Vec<usize>,
    /// Every pair, CPU node by CPU node, memory node by memory node.
    pub(crate) cells: Vec<MatrixCell>,
    /// What a reader should know (a one-node machine, nodes of different sizes).
    pub(crate) note: Option<String>,
}

/// One pair of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    pub(crate) cpu_node: usize,
    pub(crate) mem_node: usize,
    /// Index of the pair's working set in `grid.sets` (its cell has every figure).
    pub(crate) set: usize,
    /// The pair's median GB/s; absent until measured.
    pub median_gbs: Option<f64>,
}

impl Matrix {
    /// The pair of these nodes.
    pub fn cell(&self, cpu_node: usize, mem_node: usize) -> Option<&MatrixCell> {
        self.cells
            .iter()
            .find(|c| c.cpu_node == cpu_node && c.mem_node == mem_node)
    }
}

/// One row of the derived table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DerivedRow {
    /// Names the sets and thread counts it relates.
    pub name: String,
    pub value: f64,
    pub unit: Unit,
}

/// What a derived value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Printed with 2 decimals.
    #[serde(rename = "ratio")]
    Ratio,
    /// A fraction of the vendor figure: 0.827 in the JSON, printed as a percentage (82.7 %).
    #[serde(rename = "fraction")]
    Fraction,
    /// Decimal GB/s, printed with 1 decimal.
    #[serde(rename = "GB/s")]
    Gbs,
}

impl Unit {
    /// The derived table's unit column (the Markdown's word, not the JSON's).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ratio => "ratio",
            Unit::Fraction => "percent",
            Unit::Gbs => "GB/s",
        }
    }

    /// The value as the derived table prints it: a fraction as a percentage, as every
    /// fraction is in Markdown and on the screen.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Ratio => format!("{value:.2}"),
            Unit::Fraction => format!("{:.1} %", value * 100.0),
            Unit::Gbs => format!("{value:.1}"),
        }
    }
}
