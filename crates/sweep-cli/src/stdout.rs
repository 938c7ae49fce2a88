//! Standard output for the binaries. `println!` panics when stdout is closed
//! (`generate-matrix … | head`); these write through a locked handle and turn
//! a failed write into a one-line error and exit status 2 instead. Output
//! files are written atomically elsewhere, so exiting here leaves no partial
//! artifact behind. For use by `main` of the binaries, not by libraries.

use std::io::Write;

/// Writes `text` followed by a newline to stdout and flushes.
pub fn println(text: &str) {
    emit(text, true);
}

/// Writes `text` as is to stdout and flushes.
pub fn print(text: &str) {
    emit(text, false);
}

/// Writes `value` as compact JSON followed by a newline to stdout, through
/// a buffer (no copy of the whole text is held), and flushes.
pub fn println_json<T: serde::Serialize + ?Sized>(value: &T) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| try_write(&mut out, "", true));
    if let Err(e) = written {
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

fn emit(text: &str, newline: bool) {
    if let Err(e) = try_write(&mut std::io::stdout().lock(), text, newline) {
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

fn try_write(out: &mut impl Write, text: &str, newline: bool) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    if newline {
        out.write_all(b"\n")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newline_is_added_only_when_asked() {
        let mut buf = Vec::new();
        try_write(&mut buf, "a", true).expect("write");
        try_write(&mut buf, "b", false).expect("write");
        assert_eq!(buf, b"a\nb");
    }
}
