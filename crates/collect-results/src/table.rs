//! GitHub pipe tables laid out like Python's `tabulate(..., tablefmt="github")`,
//! which the reference uses for its printed summaries: numeric columns are
//! right-aligned, text columns left-aligned, every column at least two
//! characters wider than its header.

use std::fmt::Write as _;

use sweep_model::python::python_float_repr;

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Int(i64),
    Float(f64),
    Str(String),
    /// Empty cell; does not make a numeric column textual.
    Empty,
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Int(i) => i.to_string(),
            // tabulate's default `g` format for whole numbers below 1e6.
            Cell::Float(f) if f.fract() == 0.0 && f.abs() < 1e6 => format!("{f:.0}"),
            Cell::Float(f) => python_float_repr(*f),
            Cell::Str(s) => s.clone(),
            Cell::Empty => String::new(),
        }
    }
}

/// Renders `headers` and `rows` (without a trailing newline).
pub fn github_table(headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let ncols = headers.len();
    let numeric: Vec<bool> = (0..ncols)
        .map(|c| {
            let cells = rows.iter().filter_map(|r| r.get(c));
            let mut any = false;
            for cell in cells {
                match cell {
                    Cell::Int(_) | Cell::Float(_) => any = true,
                    Cell::Empty => {}
                    Cell::Str(_) => return false,
                }
            }
            any
        })
        .collect();
    let texts: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            (0..ncols)
                .map(|c| r.get(c).map(Cell::text).unwrap_or_default())
                .collect()
        })
        .collect();
    let width: Vec<usize> = (0..ncols)
        .map(|c| {
            texts
                .iter()
                .map(|r| r[c].chars().count())
                .chain(std::iter::once(headers[c].chars().count() + 2))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::from("|");
        for (c, text) in cells.iter().enumerate() {
            let pad = width[c].saturating_sub(text.chars().count());
            if numeric[c] {
                let _ = write!(s, " {}{} |", " ".repeat(pad), text);
            } else {
                let _ = write!(s, " {}{} |", text, " ".repeat(pad));
            }
        }
        s
    };
    let mut out = line(&headers.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>());
    out.push('\n');
    out.push('|');
    for w in &width {
        out.push_str(&"-".repeat(w + 2));
        out.push('|');
    }
    for r in &texts {
        out.push('\n');
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_tabulate_github() {
        let t = github_table(
            &["Model", "ISL", "N (eff)"],
            &[
                vec![Cell::Str("gptoss".into()), Cell::Int(1024), Cell::Int(1319)],
                vec![
                    Cell::Str("a-much-longer-name".into()),
                    Cell::Int(8192),
                    Cell::Empty,
                ],
            ],
        );
        let want = "\
| Model              |   ISL |   N (eff) |
|--------------------|-------|-----------|
| gptoss             |  1024 |      1319 |
| a-much-longer-name |  8192 |           |";
        assert_eq!(t, want);
    }
}
