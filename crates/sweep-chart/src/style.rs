//! One look for every picture: the colours of baseline and new (the same
//! in the PNGs and the comment's mermaid charts), the ring of a regression,
//! the ink of text and axes, and the smallest text.

use plotters::style::{FontDesc, IntoFont, RGBColor, TextStyle};

/// Main's values, the baseline (mermaid's `#1f77b4`).
pub const BASELINE: RGBColor = RGBColor(31, 119, 180);
/// The new value, this sweep's (mermaid's `#ff7f0e`).
pub const NEW: RGBColor = RGBColor(255, 127, 14);
/// The ring around a regressed point (a red no data colour uses).
pub const REGRESSED: RGBColor = RGBColor(214, 0, 0);
/// Text, axes and frames: the pictures have a transparent background, so
/// GitHub shows them on its own page colour; this grey (GitHub's muted
/// foreground) reads on both themes (contrast 4.6:1 on white, 4.1:1 on the
/// dark theme's #0d1117), as do the data colours.
pub const INK: RGBColor = RGBColor(110, 118, 129);

/// Width of a picture, in px: about the width GitHub gives an image in a
/// PR comment, so a PNG is shown at its own size and its text at the size
/// it was drawn.
pub const WIDTH: u32 = 880;
/// Smallest text in a picture, in px at [`WIDTH`]: readable at comment
/// width (GitHub's own body text is 14 px).
pub const MIN_TEXT_PX: u32 = 14;

/// plotters' SVG backend writes a font of size `s` as `font-size="s / 1.24"`
/// (its em-box convention): asked for this much more, the text is drawn at
/// the size asked for.
pub const PLOTTERS_SVG_SHRINK: f64 = 1.24;

/// A font of `px` px as drawn in the SVG.
#[must_use]
pub fn font(px: f64) -> FontDesc<'static> {
    ("sans-serif", px * PLOTTERS_SVG_SHRINK).into_font()
}

/// A font of `px` px in [`INK`].
#[must_use]
pub fn ink_font(px: f64) -> TextStyle<'static> {
    font(px).color(&INK)
}
