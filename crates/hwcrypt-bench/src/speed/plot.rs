//! `--plot FILE`: throughput against message size, one panel per cipher,
//! one line per implementation, as SVG or PNG (by the file's extension).
//!
//! Text needs a TrueType font: `HWCRYPT_PLOT_FONT`, or the first of a few
//! usual system fonts. Without one the chart is still drawn (axes, grid and
//! lines, no text) and [`write`] says so.

use super::Report;
use super::output::size_label;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The image kinds `--plot` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Scalable vector graphics.
    Svg,
    /// Portable network graphics.
    Png,
}

/// The plot kind for `path`, from its extension; an error names the ones
/// that work.
pub fn kind_of(path: &Path) -> Result<Kind, String> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(Kind::Svg),
        Some("png") => Ok(Kind::Png),
        _ => Err(format!(
            "--plot {}: the file name must end in .svg or .png",
            path.display()
        )),
    }
}

/// Checks before measuring that `path` can be written: a known extension and
/// an existing directory.
pub fn check_target(path: &Path) -> Result<Kind, String> {
    let kind = kind_of(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "--plot {}: directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    if path.is_dir() {
        return Err(format!("--plot {}: is a directory", path.display()));
    }
    Ok(kind)
}

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a font as `sans-serif` once; whether one was found.
/// `HWCRYPT_PLOT_FONT`, when set, is the only font tried (`none`: no text).
fn font() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let candidates: Vec<PathBuf> = match std::env::var_os("HWCRYPT_PLOT_FONT") {
            Some(p) if p == "none" => Vec::new(),
            Some(p) => vec![PathBuf::from(p)],
            None => FONT_PATHS.iter().map(PathBuf::from).collect(),
        };
        for path in candidates {
            if let Ok(bytes) = std::fs::read(&path) {
                // The font lives as long as the process (plotters keeps it).
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

const COLORS: [RGBColor; 10] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    r: &Report,
    text: bool,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let mut ciphers: Vec<&str> = Vec::new();
    let mut impls: Vec<&str> = Vec::new();
    for row in &r.throughput {
        if !ciphers.contains(&row.algorithm) {
            ciphers.push(row.algorithm);
        }
        if !impls.contains(&row.implementation.name.as_str()) {
            impls.push(&row.implementation.name);
        }
    }
    let color =
        |name: &str| COLORS[impls.iter().position(|i| *i == name).unwrap_or(0) % COLORS.len()];
    let (top, body) = root.split_vertically(70);
    if text {
        let cpu = r
            .header
            .hardware
            .cpu
            .as_ref()
            .map(|c| c.brand.as_str())
            .unwrap_or("unknown CPU");
        top.draw(&Text::new(
            format!(
                "hwcrypt speed: GB/s (1e9 B/s) against message size, {} thread{} — {cpu}",
                r.header.threads,
                if r.header.threads == 1 { "" } else { "s" }
            ),
            (10, 8),
            ("sans-serif", 18),
        ))?;
    }
    // Legend: a swatch and a name per implementation, in a row.
    let mut x = 10;
    for name in &impls {
        let c = color(name);
        top.draw(&PathElement::new(
            vec![(x, 48), (x + 24, 48)],
            c.stroke_width(3),
        ))?;
        if text {
            top.draw(&Text::new(
                name.to_string(),
                (x + 30, 40),
                ("sans-serif", 14),
            ))?;
        }
        x += 40 + 8 * name.len() as i32;
    }
    let cols = ciphers.len().clamp(1, 4);
    let rows = ciphers.len().div_ceil(cols).max(1);
    let panels = body.split_evenly((rows, cols));
    for (panel, cipher) in panels.iter().zip(&ciphers) {
        let cells: Vec<_> = r
            .throughput
            .iter()
            .filter(|row| row.algorithm == *cipher)
            .collect();
        // x is log2(size): ticks fall on powers of two.
        let min = (cells.iter().map(|c| c.size).min().unwrap_or(16) as f64).log2();
        let max = (cells.iter().map(|c| c.size).max().unwrap_or(16) as f64).log2();
        let (min, max) = if max > min {
            (min, max)
        } else {
            (min - 1.0, max + 1.0)
        };
        let top_gbps = cells.iter().map(|c| c.gbps).fold(0.0, f64::max).max(1e-3) * 1.1;
        let mut builder = ChartBuilder::on(panel);
        builder.margin(10);
        if text {
            builder
                .caption(*cipher, ("sans-serif", 16))
                .x_label_area_size(40)
                .y_label_area_size(52);
        }
        let mut chart = builder.build_cartesian_2d(min..max, 0.0..top_gbps)?;
        if text {
            chart
                .configure_mesh()
                .x_labels((max - min) as usize + 1)
                .y_labels(6)
                .x_label_formatter(&|v| {
                    if (v - v.round()).abs() < 1e-6 {
                        size_label(2f64.powf(v.round()) as usize)
                    } else {
                        String::new()
                    }
                })
                .x_desc("message size")
                .y_desc("GB/s")
                .y_label_formatter(&|v| format!("{v:.1}"))
                .label_style(("sans-serif", 11))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
        } else {
            chart.plotting_area().draw(&Rectangle::new(
                [(min, 0.0), (max, top_gbps)],
                BLACK.stroke_width(1),
            ))?;
        }
        for name in &impls {
            let mut points: Vec<(f64, f64)> = cells
                .iter()
                .filter(|c| c.implementation.name == *name)
                .map(|c| ((c.size as f64).log2(), c.gbps))
                .collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let c = color(name);
            let width = if name.starts_with("hwcrypt/") { 3 } else { 2 };
            chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(width)))?;
            chart.draw_series(points.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
        }
    }
    root.present()?;
    Ok(())
}

/// 64 random bits for a temporary name: std's hasher keys come from the
/// operating system's random source.
fn unguessable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}

/// Draws `report` into `path` (SVG or PNG by extension), through a
/// temporary file renamed into place, so a failure leaves no half-written
/// file. Returns a warning to show, if any (e.g. no font for the text).
pub fn write(path: &Path, report: &Report) -> Result<Option<String>, String> {
    let kind = check_target(path)?;
    if report.throughput.is_empty() {
        return Err(format!(
            "--plot {}: no throughput rows to plot",
            path.display()
        ));
    }
    let text = font();
    let n = report
        .throughput
        .iter()
        .map(|r| r.algorithm)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let cols = n.clamp(1, 4) as u32;
    let rows = n.div_ceil(cols as usize).max(1) as u32;
    let size = (cols * 380 + 20, rows * 280 + 90);
    let fail = |e: Box<dyn std::error::Error>| format!("--plot {}: {e}", path.display());
    let ext = if kind == Kind::Svg { "svg" } else { "png" };
    // A name no one can guess (so no one can put a link there first), and
    // for SVG created new (never through an existing file or link).
    let tmp = path.with_extension(format!("tmp-{:016x}.{ext}", unguessable()));
    let result = match kind {
        Kind::Svg => {
            let mut svg = String::new();
            draw(
                SVGBackend::with_string(&mut svg, size).into_drawing_area(),
                report,
                text,
            )
            .map_err(fail)?;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .and_then(|mut f| std::io::Write::write_all(&mut f, svg.as_bytes()))
                .map_err(|e| format!("--plot {}: {e}", path.display()))
        }
        Kind::Png => draw(
            BitMapBackend::new(&tmp, size).into_drawing_area(),
            report,
            text,
        )
        .map_err(fail),
    };
    if let Err(e) = result.and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| format!("--plot {}: {e}", path.display()))
    }) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok((!text).then(|| {
        format!(
            "no TrueType font found, so {} has no text (set HWCRYPT_PLOT_FONT=/path/to/font.ttf)",
            path.display()
        )
    }))
}
