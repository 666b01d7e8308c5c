//! Apple's published unified-memory bandwidth per chip.
//!
//! Apple states one memory bandwidth for each Apple Silicon chip, in its announcements and on
//! each Mac's tech-specs page, and nothing about the interface behind it; a Mac has no SMBIOS
//! memory table to compute one from. Binned parts of one chip can differ (a 14-core M4 Max has
//! fewer memory channels enabled than a 16-core one), so the count of P-cores picks the row
//! where Apple gives two figures. Sources, by chip:
//!
//! - M1 Pro 200, M1 Max 400: "Introducing M1 Pro and M1 Max" (Apple Newsroom, 18 Oct 2021),
//!   which also calls 200 GB/s "nearly 3x" M1's, the only figure it gives for M1.
//! - M1 Ultra 800: "Apple unveils M1 Ultra" (8 Mar 2022).
//! - M2 100: "Apple unveils M2" (6 Jun 2022). M2 Pro 200, M2 Max 400: "Apple unveils M2 Pro
//!   and M2 Max" (17 Jan 2023). M2 Ultra 800: "Apple introduces M2 Ultra" (5 Jun 2023).
//! - M3 100, M3 Pro 150, M3 Max 300 (14-core CPU) and 400 (16-core): the tech specs of the
//!   MacBook Pro (14-inch and 16-inch, Nov 2023). M3 Ultra 819: the tech specs of the Mac
//!   Studio (2025).
//! - M4 120: "Apple introduces M4 chip" (7 May 2024). M4 Pro 273, M4 Max 546 (16-core CPU):
//!   "Apple introduces M4 Pro and M4 Max" (30 Oct 2024); M4 Max 410 (14-core CPU): the tech
//!   specs of the MacBook Pro (14-inch, M4 Pro or M4 Max, 2024), which also list 273 for the
//!   M4 Pro (the figure the M4 Pro reference run of the tests is judged against).

/// One row: the brand string `machdep.cpu.brand_string` gives, the P-core count when the
/// figure depends on the binning, and Apple's figure in GB/s (`None`: Apple published none).
struct Row {
    brand: &'static str,
    p_cores: Option<usize>,
    gbs: Option<f64>,
}

const fn row(brand: &'static str, p_cores: Option<usize>, gbs: Option<f64>) -> Row {
    Row {
        brand,
        p_cores,
        gbs,
    }
}

const TABLE: &[Row] = &[
    row("Apple M1", None, None),
    row("Apple M1 Pro", None, Some(200.0)),
    row("Apple M1 Max", None, Some(400.0)),
    row("Apple M1 Ultra", None, Some(800.0)),
    row("Apple M2", None, Some(100.0)),
    row("Apple M2 Pro", None, Some(200.0)),
    row("Apple M2 Max", None, Some(400.0)),
    row("Apple M2 Ultra", None, Some(800.0)),
    row("Apple M3", None, Some(100.0)),
    row("Apple M3 Pro", None, Some(150.0)),
    row("Apple M3 Max", Some(10), Some(300.0)),
    row("Apple M3 Max", Some(12), Some(400.0)),
    row("Apple M3 Ultra", None, Some(819.0)),
    row("Apple M4", None, Some(120.0)),
    row("Apple M4 Pro", None, Some(273.0)),
    row("Apple M4 Max", Some(10), Some(410.0)),
    row("Apple M4 Max", Some(12), Some(546.0)),
];

/// What the table says for a chip.
#[derive(Debug, Clone, PartialEq)]
pub enum AppleFigure {
    /// Apple's published figure, GB/s.
    Published(f64),
    /// A chip Apple published no single figure for, with the reason.
    None(String),
}

/// Apple's published figure for the chip `brand` with `p_cores` performance cores.
pub fn published_gbs(brand: &str, p_cores: Option<usize>) -> AppleFigure {
    let brand = brand.trim();
    let rows: Vec<&Row> = TABLE.iter().filter(|r| r.brand == brand).collect();
    let row = match rows.as_slice() {
        [] => {
            return AppleFigure::None(format!(
                "stream-top knows no published bandwidth for '{brand}'"
            ));
        }
        [one] => one,
        binned => match binned
            .iter()
            .find(|r| r.p_cores.is_some() && r.p_cores == p_cores)
        {
            Some(r) => r,
            None => {
                let known: Vec<String> = binned
                    .iter()
                    .filter_map(|r| Some(format!("{} P-cores", r.p_cores?)))
                    .collect();
                return AppleFigure::None(format!(
                    "Apple's figure for the {brand} depends on its binning ({}); this one lists {}",
                    known.join(" or "),
                    p_cores.map_or("no P-core count".to_string(), |p| format!("{p} P-cores"))
                ));
            }
        },
    };
    match row.gbs {
        Some(g) => AppleFigure::Published(g),
        None => AppleFigure::None(format!(
            "Apple published no bandwidth figure for the {brand}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_reachable_and_positive() {
        for r in TABLE {
            match published_gbs(r.brand, r.p_cores) {
                AppleFigure::Published(g) => assert_eq!(Some(g), r.gbs, "{}", r.brand),
                AppleFigure::None(_) => assert!(r.gbs.is_none(), "{}", r.brand),
            }
        }
    }
}
