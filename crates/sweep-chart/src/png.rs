//! PNG pictures of the charts, rasterised in process by resvg from the SVG
//! that compare-results' charts and [`crate::trend`] draw. The only font is
//! the bundled DejaVu Sans
//! (`fonts/`, its licence beside it), loaded from bytes and standing for
//! every family the SVG names, so the pixels do not depend on the fonts of
//! the machine that runs the comparison.

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

/// DejaVu Sans 2.37 (`fonts/DejaVuSans-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FONT_FAMILY: &str = "DejaVu Sans";

/// Largest picture rasterised, in pixels (width × height): a configuration's
/// chart is 880 × 1080; this bounds the memory of a malformed size.
const MAX_PIXELS: u64 = 4096 * 4096;

#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("the SVG does not parse: {0}")]
    Parse(#[from] usvg::Error),
    #[error("the picture is {width} × {height} px, empty or over {MAX_PIXELS} pixels")]
    Size { width: u32, height: u32 },
    #[error("encoding the PNG: {0}")]
    Encode(String),
}

fn options() -> usvg::Options<'static> {
    let mut db = usvg::fontdb::Database::new();
    db.load_font_data(FONT.to_vec());
    // Every generic family is the one font.
    db.set_sans_serif_family(FONT_FAMILY);
    db.set_serif_family(FONT_FAMILY);
    db.set_monospace_family(FONT_FAMILY);
    db.set_cursive_family(FONT_FAMILY);
    db.set_fantasy_family(FONT_FAMILY);
    usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        fontdb: Arc::new(db),
        ..usvg::Options::default()
    }
}

/// The PNG of `svg` at its own size (one SVG unit, one pixel), on a
/// transparent background: the page's colour shows through, light or dark
/// (the charts draw in colours that read on both, see
/// [`crate::style::INK`]).
pub fn render(svg: &str) -> Result<Vec<u8>, PngError> {
    let tree = usvg::Tree::from_str(svg, &options())?;
    let size = tree.size().to_int_size();
    let (width, height) = (size.width(), size.height());
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(PngError::Size { width, height });
    }
    let mut pixmap =
        tiny_skia::Pixmap::new(width, height).ok_or(PngError::Size { width, height })?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| PngError::Encode(e.to_string()))
}
