//! Single-node GPU power integration from a telemetry CSV (spec
//! `results.md` §3.2, the reference's `aggregate_power.py`): per-GPU
//! trapezoidal integration over the benchmark window with linear
//! interpolation at its ends, plus the advisory AMD energy-accumulator
//! cross-check.
//!
//! Timestamps without a zone are local time in the reference. They are only
//! accepted here when the local zone is UTC; otherwise the caller gets
//! [`Unsupported`] and records the internal-error fallback instead of
//! numbers that could be off by the zone offset.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value, json};

/// Largest gap between samples inside the window (seconds).
pub const MAX_SAMPLE_GAP_S: f64 = 3.0;
const ACCUMULATOR_TOLERANCE: f64 = 0.05;

/// The CSV uses something v1 cannot evaluate faithfully.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// Result of integrating one CSV (the reference's `PowerIntegration`).
#[derive(Debug, Clone, Default)]
pub struct Integration {
    pub reasons: Vec<String>,
    pub observed_gpu_ids: Vec<String>,
    pub per_gpu_sample_counts: Vec<(String, usize)>,
    pub per_gpu_max_sample_gap_s: Vec<(String, f64)>,
    pub per_gpu_energy_j: Vec<(String, f64)>,
    pub device_issues: Vec<(String, Vec<&'static str>)>,
    /// `(avg_power_w, avg_total_gpu_power_w, total_gpu_energy_j)` when every GPU has an energy.
    pub totals: Option<(f64, f64, f64)>,
    /// The CSV's last row had no newline (cut mid-write) and was left out.
    pub dropped_cut_row: bool,
}

/// Records the reason `r` once (the order of first occurrence kept).
pub(crate) fn push_reason(reasons: &mut Vec<String>, r: &str) {
    if !reasons.iter().any(|x| x == r) {
        reasons.push(r.to_owned());
    }
}

/// Python's `csv.reader(..., skipinitialspace=True)` over decoded text.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    parse_csv_with(text, true)
}

/// Python's `csv.reader` over decoded text; `skip_initial_space` is the
/// reader option of that name (the multi-node samples use the default, off).
pub fn parse_csv_with(text: &str, skip_initial_space: bool) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    // States: at field start, in unquoted field, in quoted field, after a closing quote.
    #[derive(PartialEq)]
    enum St {
        Start,
        Plain,
        Quoted,
        AfterQuote,
    }
    let mut st = St::Start;
    let mut record_started = false;
    while let Some(c) = chars.next() {
        match st {
            St::Quoted => {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        st = St::AfterQuote;
                    }
                } else {
                    field.push(c);
                }
            }
            _ => match c {
                ',' => {
                    row.push(std::mem::take(&mut field));
                    st = St::Start;
                    record_started = true;
                }
                '\n' | '\r' => {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    if record_started || st != St::Start || !field.is_empty() {
                        row.push(std::mem::take(&mut field));
                    }
                    rows.push(std::mem::take(&mut row));
                    st = St::Start;
                    record_started = false;
                }
                ' ' if skip_initial_space && st == St::Start => record_started = true,
                '"' if st == St::Start => {
                    st = St::Quoted;
                    record_started = true;
                }
                _ => {
                    field.push(c);
                    if st == St::Start {
                        st = St::Plain;
                    }
                    record_started = true;
                }
            },
        }
    }
    if record_started || st != St::Start || !field.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// `csv.DictReader` view: stripped header names and rows; a row's value for
/// a name is the last column with that name, `""` when the row is short.
///
/// A data row at the end of the file without its newline was cut mid-write
/// (the monitor is stopped, or the file copied, while it writes): it is
/// left out, since its last value may be cut short (`683.57` read as `68`).
/// Deliberate difference: the reference's `csv` reader keeps that row.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Whether a last row without its newline was left out.
    cut_row: bool,
}

impl Table {
    fn read(path: &Path) -> std::io::Result<Table> {
        let bytes = sweep_model::fsio::read_bytes(path, sweep_model::fsio::MAX_POWER_CSV_BYTES)?;
        let text = String::from_utf8_lossy(&bytes);
        let mut rows = parse_csv(&text);
        // The header alone is kept: with no data rows the outcome is the same.
        let cut_row = !text.is_empty() && !text.ends_with(['\n', '\r']) && rows.len() > 1;
        if cut_row {
            rows.pop();
        }
        let mut rows = rows.into_iter();
        let header = rows
            .next()
            .unwrap_or_default()
            .into_iter()
            .map(|h| h.trim().to_owned())
            .collect();
        let rows = rows.filter(|r| !r.is_empty()).collect();
        Ok(Table {
            header,
            rows,
            cut_row,
        })
    }
    fn index(&self, name: &str) -> Option<usize> {
        self.header.iter().rposition(|h| h == name)
    }
}

/// `-?\d+(?:\.\d+)?` at the start of `s`; returns its length.
fn number_prefix(s: &[u8]) -> Option<usize> {
    let mut i = usize::from(s.first() == Some(&b'-'));
    let digits = |from: usize| s[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let d = digits(i);
    if d == 0 {
        return None;
    }
    i += d;
    if s.get(i) == Some(&b'.') {
        let f = digits(i + 1);
        if f > 0 {
            i += 1 + f;
        }
    }
    Some(i)
}

/// First number in a power cell (`412.34 W` -> 412.34); `None` for empty,
/// `[N/A]`, `N/A`, `NA` or no number.
pub fn parse_power(cell: &str) -> Option<f64> {
    let v = cell.trim();
    if v.is_empty() || matches!(v.to_lowercase().as_str(), "[n/a]" | "n/a" | "na") {
        return None;
    }
    let b = v.as_bytes();
    (0..b.len()).find_map(|i| number_prefix(&b[i..]).and_then(|n| v[i..i + n].parse().ok()))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Whether naive timestamps (local time in the reference) may be read as UTC.
pub fn local_zone_is_utc() -> bool {
    const UTC: &[&str] = &[
        "UTC",
        "UTC0",
        "Etc/UTC",
        "GMT",
        "GMT0",
        "Etc/GMT",
        "UCT",
        "Universal",
        "Zulu",
    ];
    match std::env::var("TZ") {
        Ok(tz) => {
            let tz = tz.trim_start_matches(':');
            tz.is_empty() || UTC.contains(&tz)
        }
        Err(_) => match std::fs::read_link("/etc/localtime") {
            Ok(target) => {
                let t = target.to_string_lossy();
                UTC.iter().any(|z| t.ends_with(&format!("/{z}")))
            }
            // No zone file: the C library falls back to UTC.
            Err(_) => !Path::new("/etc/localtime").exists(),
        },
    }
}

/// A parsed timestamp: epoch seconds, and whether it had no zone.
fn parse_timestamp(cell: &str) -> Option<(f64, bool)> {
    let v = cell.trim();
    if v.is_empty() {
        return None;
    }
    if number_prefix(v.as_bytes()) == Some(v.len()) {
        let n: f64 = v.parse().ok()?;
        return Some((if n > 1e12 { n / 1000.0 } else { n }, false));
    }
    // Date part: `YYYY/MM/DD` (nvidia-smi, naive) or `YYYY-MM-DD` (ISO).
    let (date, rest, slash) = if let Some(sp) = v.find(['T', ' ']) {
        (&v[..sp], Some(&v[sp + 1..]), v[..sp].contains('/'))
    } else {
        (v, None, v.contains('/'))
    };
    let (y, m, d) = parse_date(date, slash)?;
    let mut secs = days_from_civil(y, m, d) * 86_400;
    let mut micros = 0i64;
    let mut naive = true;
    match rest {
        None if slash => return None,
        None => {}
        Some(time) => {
            if slash && v.as_bytes()[date.len()] != b' ' {
                return None;
            }
            let (clock, zone) = split_zone(time, slash)?;
            let (hms, frac) = match clock.split_once('.') {
                Some((a, f)) => (a, Some(f)),
                None => (clock, None),
            };
            let (h, mi, s) = parse_hms(hms, slash, frac.is_none())?;
            if h > 23 || mi > 59 || s > 61 {
                return None;
            }
            if let Some(fr) = frac {
                let digits = digits_between(fr, 1, 6)?;
                micros = digits * 10i64.pow(6 - fr.len() as u32);
            }
            secs += h * 3600 + mi * 60 + s;
            if let Some(off) = zone {
                secs -= off;
                naive = false;
            }
        }
    }
    Some((secs as f64 + micros as f64 / 1e6, naive))
}

/// `s` as a number when it is `min..=max` ASCII digits.
fn digits_between(s: &str, min: usize, max: usize) -> Option<i64> {
    (s.len() >= min && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `(year, month, day)` of a valid calendar date: `YYYY/M/D` when `slash`
/// (one or two digits for month and day), else `YYYY-MM-DD`.
fn parse_date(date: &str, slash: bool) -> Option<(i64, i64, i64)> {
    let num = digits_between;
    let parts: Vec<&str> = date.split(if slash { '/' } else { '-' }).collect();
    let [y, m, d] = parts.as_slice() else {
        return None;
    };
    let (y, m, d) = if slash {
        (num(y, 4, 4)?, num(m, 1, 2)?, num(d, 1, 2)?)
    } else {
        (num(y, 4, 4)?, num(m, 2, 2)?, num(d, 2, 2)?)
    };
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some((y, m, d))
}

/// Splits the zone suffix (ISO only: `Z`, `±HH`, `±HHMM`, `±HH:MM`) off the
/// time of day: the clock text and the zone's offset in seconds, if any.
fn split_zone(time: &str, slash: bool) -> Option<(&str, Option<i64>)> {
    let num = digits_between;
    if slash {
        Some((time, None))
    } else if let Some(t) = time.strip_suffix('Z') {
        Some((t, Some(0)))
    } else if let Some(p) = time.rfind(['+', '-']) {
        let z = &time[p + 1..];
        let sign = if time.as_bytes()[p] == b'-' { -1 } else { 1 };
        let (h, mi) = match z.len() {
            2 => (num(z, 2, 2)?, 0),
            // By `get`: a zone of other than ASCII bytes is refused, not a
            // cut inside a character.
            4 => (num(z.get(..2)?, 2, 2)?, num(z.get(2..)?, 2, 2)?),
            5 if z.get(2..3) == Some(":") => (num(z.get(..2)?, 2, 2)?, num(z.get(3..)?, 2, 2)?),
            _ => return None,
        };
        Some((&time[..p], Some(sign * (h * 3600 + mi * 60))))
    } else {
        Some((time, None))
    }
}

/// `(hours, minutes, seconds)` of the clock before any fraction: `H:M:S`
/// (one or two digits) when `slash`, else `HH:MM:SS`, or `HH:MM` when
/// `no_fraction`.
fn parse_hms(hms: &str, slash: bool, no_fraction: bool) -> Option<(i64, i64, i64)> {
    let num = digits_between;
    let f: Vec<&str> = hms.split(':').collect();
    if slash {
        let [h, mi, s] = f.as_slice() else {
            return None;
        };
        Some((num(h, 1, 2)?, num(mi, 1, 2)?, num(s, 1, 2)?))
    } else {
        match f.as_slice() {
            [h, mi] if no_fraction => Some((num(h, 2, 2)?, num(mi, 2, 2)?, 0)),
            [h, mi, s] => Some((num(h, 2, 2)?, num(mi, 2, 2)?, num(s, 2, 2)?)),
            _ => None,
        }
    }
}

/// Parses a timestamp cell; naive values need a UTC local zone.
fn timestamp(cell: &str, utc: bool) -> Result<Option<f64>, Unsupported> {
    match parse_timestamp(cell) {
        Some((_, true)) if !utc => Err(Unsupported(format!(
            "timestamp {:?} has no time zone and the local zone is not UTC",
            cell.trim()
        ))),
        Some((t, _)) => Ok(Some(t)),
        None => Ok(None),
    }
}

/// Python's `_gpu_sort_key`: all-digit ids numerically first, then by string.
fn gpu_order(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |s: &str| {
        if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
            (
                0,
                s.trim_start_matches('0').len(),
                s.trim_start_matches('0').to_owned(),
            )
        } else {
            (1, 0, s.to_owned())
        }
    };
    let (ka, kb) = (key(a), key(b));
    ka.cmp(&kb).then_with(|| a.cmp(b))
}

/// `(timestamp, power, gpu)` column indices from stripped header names.
fn detect_columns(header: &[String]) -> (Option<String>, Option<String>, Option<String>) {
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    let ts = lower
        .iter()
        .position(|h| h.contains("time"))
        .map(|i| header[i].clone());
    let power = lower
        .iter()
        .position(|h| {
            h.contains("power") && !["limit", "cap", "max", "min"].iter().any(|x| h.contains(x))
        })
        .map(|i| header[i].clone());
    let gpu = lower
        .iter()
        .position(|h| {
            matches!(
                h.trim(),
                "index" | "gpu" | "gpu_id" | "gpu_index" | "card" | "device"
            )
        })
        .map(|i| header[i].clone());
    (ts, power, gpu)
}

fn interpolate(samples: &[(f64, f64)], t: f64) -> f64 {
    let right = samples.partition_point(|s| s.0 < t);
    if right < samples.len() && (samples[right].0 - t).abs() <= 1e-9 {
        return samples[right].1;
    }
    // Bracketing was checked by the caller.
    let left = right.saturating_sub(1);
    let (lt, lp) = samples[left];
    let (rt, rp) = samples[right.min(samples.len() - 1)];
    if rt == lt {
        return lp;
    }
    let fraction = (t - lt) / (rt - lt);
    lp + fraction * (rp - lp)
}

pub(crate) fn integrate_device(samples: &[(f64, f64)], start: f64, end: f64) -> f64 {
    let mut clipped = vec![(start, interpolate(samples, start))];
    clipped.extend(
        samples
            .iter()
            .copied()
            .filter(|&(t, _)| start < t && t < end),
    );
    clipped.push((end, interpolate(samples, end)));
    let mut energy = 0.0;
    for w in clipped.windows(2) {
        energy += (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0;
    }
    energy
}

/// One GPU's power readings grouped by exact timestamp (insertion order kept).
type Readings = Vec<(f64, Vec<f64>)>;

/// Integrates `csv` over `[start, end]` (the CSV exists and the window is valid).
pub fn integrate(
    csv: &Path,
    start: f64,
    end: f64,
    expected: i64,
) -> Result<Integration, Unsupported> {
    let mut out = Integration::default();
    if expected <= 0 {
        push_reason(&mut out.reasons, "invalid_expected_gpu_count");
    }
    let Some(table) = read_telemetry(csv, &mut out.reasons) else {
        return Ok(out);
    };
    out.dropped_cut_row = table.cut_row;
    let Some(cols) = required_columns(&table, &mut out.reasons) else {
        return Ok(out);
    };
    let (raw, missing_gpu) = group_readings(&table, cols, start, end, &mut out.reasons)?;
    if missing_gpu {
        push_reason(&mut out.reasons, "gpu_identity_missing");
    }
    if raw.is_empty() {
        push_reason(&mut out.reasons, "no_usable_power_samples");
        return Ok(out);
    }
    let mut ids: Vec<String> = raw.keys().cloned().collect();
    ids.sort_by(|a, b| gpu_order(a, b));
    if expected > 0 && ids.len() as i64 != expected {
        push_reason(&mut out.reasons, "expected_gpu_count_mismatch");
    }
    for id in &ids {
        integrate_gpu(&mut out, id, &raw[id], start, end);
    }
    if out.per_gpu_energy_j.len() == ids.len() {
        let total: f64 = out.per_gpu_energy_j.iter().map(|(_, e)| e).sum();
        let avg_total = total / (end - start);
        out.totals = Some((avg_total / ids.len() as f64, avg_total, total));
    }
    out.observed_gpu_ids = ids;
    Ok(out)
}

/// Reads the telemetry table, or records why it cannot be used (an empty or
/// unreadable file).
fn read_telemetry(csv: &Path, reasons: &mut Vec<String>) -> Option<Table> {
    match std::fs::metadata(csv) {
        Ok(m) if m.len() == 0 => {
            push_reason(reasons, "telemetry_file_empty");
            return None;
        }
        Ok(_) => {}
        Err(_) => {
            push_reason(reasons, "telemetry_file_unreadable");
            return None;
        }
    }
    let Ok(table) = Table::read(csv) else {
        push_reason(reasons, "telemetry_file_unreadable");
        return None;
    };
    Some(table)
}

/// The `(timestamp, power, gpu)` column positions, or `None` after recording
/// each column that is missing.
fn required_columns(table: &Table, reasons: &mut Vec<String>) -> Option<(usize, usize, usize)> {
    let (ts, power, gpu) = power_columns(table);
    if ts.is_none() {
        push_reason(reasons, "timestamp_column_missing");
    }
    if power.is_none() {
        push_reason(reasons, "power_column_missing");
    }
    if gpu.is_none() {
        push_reason(reasons, "gpu_identity_column_missing");
    }
    Some((ts?, power?, gpu?))
}

/// The positions of the `(timestamp, power, gpu)` columns
/// [`detect_columns`] names in `table`, each `None` when it has none.
fn power_columns(table: &Table) -> (Option<usize>, Option<usize>, Option<usize>) {
    let (ts, power, gpu) = detect_columns(&table.header);
    let at = |name: Option<String>| name.map(|n| table.index(&n).unwrap_or(0));
    (at(ts), at(power), at(gpu))
}

/// The rows near the window, per GPU, grouped by exact timestamp; records
/// invalid samples, and returns whether some row had no GPU identity.
fn group_readings(
    table: &Table,
    (ti, pi, gi): (usize, usize, usize),
    start: f64,
    end: f64,
    reasons: &mut Vec<String>,
) -> Result<(BTreeMap<String, Readings>, bool), Unsupported> {
    let utc = local_zone_is_utc();
    let cell = |row: &Vec<String>, i: usize| row.get(i).map_or("", |s| s.trim()).to_owned();
    let mut raw: BTreeMap<String, Readings> = BTreeMap::new();
    let mut slot: HashMap<(String, u64), usize> = HashMap::new();
    let mut missing_gpu = false;
    for row in &table.rows {
        let Some(t) = timestamp(&cell(row, ti), utc)?.filter(|t| t.is_finite()) else {
            push_reason(reasons, "invalid_timestamp_sample");
            continue;
        };
        if t < start - MAX_SAMPLE_GAP_S || t > end + MAX_SAMPLE_GAP_S {
            continue;
        }
        let Some(p) = parse_power(&cell(row, pi)).filter(|p| p.is_finite() && *p >= 0.0) else {
            push_reason(reasons, "invalid_power_sample");
            continue;
        };
        let gpu = cell(row, gi);
        if gpu.is_empty() {
            missing_gpu = true;
            continue;
        }
        let per = raw.entry(gpu.clone()).or_default();
        // -0.0 and 0.0 are the same timestamp, as in a Python dict.
        let bits = if t == 0.0 { 0 } else { t.to_bits() };
        match slot.get(&(gpu.clone(), bits)) {
            Some(&i) => per[i].1.push(p),
            None => {
                slot.insert((gpu, bits), per.len());
                per.push((t, vec![p]));
            }
        }
    }
    Ok((raw, missing_gpu))
}

/// One GPU: averages readings per timestamp, checks count, bracketing and
/// gaps, and records its sample count, largest gap, energy and issues.
fn integrate_gpu(out: &mut Integration, id: &str, readings: &Readings, start: f64, end: f64) {
    let mut samples: Vec<(f64, f64)> = readings
        .iter()
        .map(|(t, v)| (*t, v.iter().sum::<f64>() / v.len() as f64))
        .collect();
    samples.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    out.per_gpu_sample_counts
        .push((id.to_owned(), samples.len()));
    let mut issues = Vec::new();
    if samples.len() < 2 {
        issues.push("insufficient_power_samples");
        push_reason(&mut out.reasons, "insufficient_power_samples");
    } else if samples[0].0 > start || samples[samples.len() - 1].0 < end {
        issues.push("benchmark_window_not_bracketed");
        push_reason(&mut out.reasons, "benchmark_window_not_bracketed");
    } else {
        let left = samples.partition_point(|s| s.0 <= start).saturating_sub(1);
        let right = samples.partition_point(|s| s.0 < end);
        let relevant = &samples[left..=right.min(samples.len() - 1)];
        let max_gap = relevant
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(0.0, f64::max);
        out.per_gpu_max_sample_gap_s.push((id.to_owned(), max_gap));
        if max_gap > MAX_SAMPLE_GAP_S {
            issues.push("sampling_gap_exceeded");
            push_reason(&mut out.reasons, "sampling_gap_exceeded");
        }
        out.per_gpu_energy_j
            .push((id.to_owned(), integrate_device(&samples, start, end)));
    }
    if !issues.is_empty() {
        out.device_issues.push((id.to_owned(), issues));
    }
}

/// `{id: value}` in the given order.
pub fn ordered<T: Into<Value> + Clone>(pairs: &[(String, T)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect::<Map<_, _>>(),
    )
}

fn snapshot(path: &Path) -> std::io::Result<Option<Vec<(String, f64)>>> {
    let t = Table::read(path)?;
    let (Some(gi), Some(ei)) = (t.index("gpu"), t.index("total_energy_consumption")) else {
        return Ok(None);
    };
    let mut out: Vec<(String, f64)> = Vec::new();
    for row in &t.rows {
        let gpu = row.get(gi).map_or("", |s| s.trim());
        if gpu.is_empty() {
            continue;
        }
        let Some(e) = row
            .get(ei)
            .and_then(|s| sweep_model::python::python_float(s.trim()))
        else {
            continue;
        };
        if e.is_finite() {
            match out.iter_mut().find(|(g, _)| g == gpu) {
                Some(slot) => slot.1 = e,
                None => out.push((gpu.to_owned(), e)),
            }
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

fn trapezoid(s: &[(f64, f64)]) -> f64 {
    s.windows(2)
        .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0)
        .fold(0.0, |a, b| a + b)
}

/// One accumulator snapshot: `(gpu, total energy)` in file order.
type Snapshot = Vec<(String, f64)>;

/// Each GPU's whole power stream: `(time, power)` sorted by time.
type Stream = BTreeMap<String, Vec<(f64, f64)>>;

/// Per-GPU accumulator deltas between the two snapshots.
struct SnapshotDeltas {
    /// GPUs in both snapshots, in GPU order.
    matched: Vec<String>,
    /// `end - start` per matched GPU.
    deltas: Vec<(String, f64)>,
    /// GPUs in only one snapshot.
    unmatched: Vec<String>,
    /// Matched GPUs whose accumulator went backwards.
    negative: Vec<String>,
}

/// The advisory accumulator cross-check (never changes validity).
pub fn accumulator_check(csv: &Path) -> Result<Value, Unsupported> {
    let unavailable = |r: &str| json!({"available": false, "reason": r});
    let (start, end) = match read_snapshots(csv) {
        Ok(pair) => pair,
        Err(reported) => return Ok(reported),
    };
    let SnapshotDeltas {
        matched,
        deltas,
        unmatched,
        negative,
    } = snapshot_deltas(&start, &end);
    let Some(stream) = read_stream(csv)? else {
        return Ok(unavailable("cross_check_error"));
    };
    let mut integrated: Vec<String> = stream
        .keys()
        .filter(|g| matched.contains(g))
        .cloned()
        .collect();
    integrated.sort_by(|a, b| gpu_order(a, b));
    let integrated_j = integrated
        .iter()
        .map(|g| trapezoid(&stream[g]))
        .fold(0.0, |a, b| a + b);
    let span = stream_span(&stream, &integrated);
    let delta_j = deltas.iter().map(|(_, d)| d).fold(0.0, |a, b| a + b);
    let (rel, within) = if delta_j > 0.0 {
        let r = (delta_j - integrated_j).abs() / delta_j;
        (json!(r), negative.is_empty() && r <= ACCUMULATOR_TOLERANCE)
    } else {
        (Value::Null, false)
    };
    Ok(json!({
        "available": true,
        "accumulator_delta_j": delta_j,
        "integrated_stream_j": integrated_j,
        "relative_error": rel,
        "within_tolerance": within,
        "tolerance": ACCUMULATOR_TOLERANCE,
        "per_gpu_delta_j": ordered(&deltas),
        "integrated_gpu_ids": integrated,
        "unmatched_gpus": unmatched,
        "negative_delta_gpus": negative,
        "stream_span_s": span,
    }))
}

/// The `<stem>_energy_start.csv` and `<stem>_energy_end.csv` snapshots next to
/// `csv`; `Err` holds the check's result when they cannot both be used
/// (`null` when neither exists).
fn read_snapshots(csv: &Path) -> Result<(Snapshot, Snapshot), Value> {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let start_p = csv.with_file_name(format!("{stem}_energy_start.csv"));
    let end_p = csv.with_file_name(format!("{stem}_energy_end.csv"));
    let unavailable = |r: &str| json!({"available": false, "reason": r});
    match (start_p.is_file(), end_p.is_file()) {
        (false, false) => return Err(Value::Null),
        (false, true) => return Err(unavailable("missing_start_snapshot")),
        (true, false) => return Err(unavailable("missing_end_snapshot")),
        (true, true) => {}
    }
    let Ok(start) = snapshot(&start_p) else {
        return Err(unavailable("cross_check_error"));
    };
    let Some(start) = start else {
        return Err(unavailable("unparseable_start_snapshot"));
    };
    let Ok(end) = snapshot(&end_p) else {
        return Err(unavailable("cross_check_error"));
    };
    let Some(end) = end else {
        return Err(unavailable("unparseable_end_snapshot"));
    };
    Ok((start, end))
}

/// Matches the two snapshots by GPU and takes each matched GPU's delta.
fn snapshot_deltas(start: &[(String, f64)], end: &[(String, f64)]) -> SnapshotDeltas {
    let get = |v: &[(String, f64)], k: &str| v.iter().find(|(g, _)| g == k).map(|(_, e)| *e);
    let mut matched: Vec<String> = start
        .iter()
        .filter(|(g, _)| get(end, g).is_some())
        .map(|(g, _)| g.clone())
        .collect();
    matched.sort_by(|a, b| gpu_order(a, b));
    let deltas: Vec<(String, f64)> = matched
        .iter()
        .map(|g| {
            (
                g.clone(),
                get(end, g).unwrap_or(0.0) - get(start, g).unwrap_or(0.0),
            )
        })
        .collect();
    let mut unmatched: Vec<String> = start
        .iter()
        .chain(end.iter())
        .map(|(g, _)| g.clone())
        .filter(|g| get(start, g).is_none() || get(end, g).is_none())
        .collect();
    unmatched.sort_by(|a, b| gpu_order(a, b));
    unmatched.dedup();
    let negative: Vec<String> = deltas
        .iter()
        .filter(|(_, d)| *d < 0.0)
        .map(|(g, _)| g.clone())
        .collect();
    SnapshotDeltas {
        matched,
        deltas,
        unmatched,
        negative,
    }
}

/// The whole power stream per GPU (no window filter), each sorted by time;
/// `None` when the CSV cannot be read.
fn read_stream(csv: &Path) -> Result<Option<Stream>, Unsupported> {
    let Ok(table) = Table::read(csv) else {
        return Ok(None);
    };
    let mut stream: Stream = BTreeMap::new();
    if let (Some(ti), Some(pi), Some(gi)) = power_columns(&table) {
        let utc = local_zone_is_utc();
        for row in &table.rows {
            let c = |i: usize| row.get(i).map_or("", |s| s.trim());
            let Some(t) = timestamp(c(ti), utc)? else {
                continue;
            };
            let Some(p) = parse_power(c(pi)) else {
                continue;
            };
            let g = c(gi);
            if g.is_empty() || !t.is_finite() || !p.is_finite() {
                continue;
            }
            stream.entry(g.to_owned()).or_default().push((t, p));
        }
    }
    for s in stream.values_mut() {
        s.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Ok(Some(stream))
}

/// Seconds from the earliest first sample to the latest last sample of the
/// `integrated` GPUs' streams (0 when there are none).
fn stream_span(stream: &Stream, integrated: &[String]) -> f64 {
    let bounds: Vec<f64> = integrated
        .iter()
        .flat_map(|g| [stream[g][0].0, stream[g][stream[g].len() - 1].0])
        .collect();
    if bounds.is_empty() {
        0.0
    } else {
        bounds.iter().copied().fold(f64::MIN, f64::max)
            - bounds.iter().copied().fold(f64::MAX, f64::min)
    }
}

/// Python's `round(x, digits)` (round-half-even on the exact binary value).
pub fn py_round(x: f64, digits: usize) -> f64 {
    format!("{x:.digits$}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_spaces_and_blank_lines() {
        let rows = parse_csv("a, b ,\"c,d\"\n\n1,  \"x\"\"y\",3\r\n4,5\n");
        assert_eq!(rows[0], ["a", "b ", "c,d"]);
        assert!(rows[1].is_empty());
        assert_eq!(rows[2], ["1", "x\"y", "3"]);
        assert_eq!(rows[3], ["4", "5"]);
    }

    #[test]
    fn power_and_timestamps() {
        assert_eq!(parse_power("412.34 W"), Some(412.34));
        assert_eq!(parse_power("[N/A]"), None);
        assert_eq!(parse_power("-3 W"), Some(-3.0));
        assert_eq!(
            parse_timestamp("1700000000.5"),
            Some((1_700_000_000.5, false))
        );
        assert_eq!(
            parse_timestamp("1700000000500"),
            Some((1_700_000_000.5, false))
        );
        assert_eq!(
            parse_timestamp("2023-11-14T22:13:20Z"),
            Some((1_700_000_000.0, false))
        );
        assert_eq!(
            parse_timestamp("2023-11-14T23:13:20+01:00"),
            Some((1_700_000_000.0, false))
        );
        assert_eq!(
            parse_timestamp("2023/11/14 22:13:20.25"),
            Some((1_700_000_000.25, true))
        );
        assert_eq!(
            parse_timestamp("2023-11-14 22:13:20"),
            Some((1_700_000_000.0, true))
        );
        assert_eq!(parse_timestamp("yesterday"), None);
        assert_eq!(parse_timestamp("2023-02-30T00:00:00Z"), None);
        // A zone with a character of more than one byte is refused, not a
        // panic (it was cut by byte position).
        assert_eq!(parse_timestamp("2024-01-01T00:00:00+1é45"), None);
        assert_eq!(parse_timestamp("2024-01-01T00:00:00+0é0"), None);
        assert_eq!(parse_timestamp("2024-01-01T00:00:00+é:00"), None);
    }

    #[test]
    fn integrates_two_gpus_with_interpolated_edges() {
        let d = tempfile::tempdir().expect("tmp");
        let csv = d.path().join("m.csv");
        let mut s = String::from("timestamp,index,power.draw [W],power.limit [W]\n");
        for t in 0..=10 {
            s.push_str(&format!("{t},0,100 W,700\n{t},1,{} W,700\n", 200 + t));
        }
        std::fs::write(&csv, s).expect("w");
        let r = integrate(&csv, 2.5, 7.5, 2).expect("supported");
        assert!(r.reasons.is_empty(), "{:?}", r.reasons);
        assert_eq!(r.observed_gpu_ids, ["0", "1"]);
        // GPU 0: 100 W x 5 s; GPU 1: mean 205 W x 5 s.
        assert_eq!(
            r.per_gpu_energy_j,
            [("0".to_owned(), 500.0), ("1".to_owned(), 1025.0)]
        );
        let (avg, avg_total, total) = r.totals.expect("totals");
        assert_eq!((avg, avg_total, total), (152.5, 305.0, 1525.0));
        let r = integrate(&csv, 2.5, 12.0, 4).expect("supported");
        assert_eq!(
            r.reasons,
            [
                "expected_gpu_count_mismatch",
                "benchmark_window_not_bracketed"
            ]
        );
    }

    /// The monitor's CSV as nvidia-smi writes it, two GPUs a tick, with the
    /// last row cut inside its power value when `cut` is given.
    fn monitor_csv(last_t: u32, cut: Option<&str>) -> String {
        let mut s = String::from("timestamp, index, power.draw [W]\n");
        for t in 0..=last_t {
            s.push_str(&format!("{t}, 0, 300.00 W\n{t}, 1, {}.57 W\n", 600 + t));
        }
        if let Some(cut) = cut {
            s.push_str(&format!(
                "{}, 0, 300.00 W\n{}, 1, {cut}",
                last_t + 1,
                last_t + 1
            ));
        }
        s
    }

    /// What a cut row could change: reasons, per-GPU energy and totals.
    fn outcome(r: &Integration) -> String {
        format!("{:?} {:?} {:?}", r.reasons, r.per_gpu_energy_j, r.totals)
    }

    #[test]
    fn a_last_row_cut_mid_write_counts_as_if_it_were_not_there() {
        let d = tempfile::tempdir().expect("tmp");
        let (cut, whole) = (d.path().join("cut.csv"), d.path().join("whole.csv"));
        // The cut row is GPU 1's only sample after the window's end: read as
        // `6` W, it would pass and pull the energy down; without it the
        // window is not bracketed, as for the file that ends a row earlier.
        std::fs::write(&cut, monitor_csv(9, Some("6"))).expect("w");
        let mut removed = monitor_csv(9, None);
        removed.push_str("10, 0, 300.00 W\n");
        std::fs::write(&whole, &removed).expect("w");
        let a = integrate(&cut, 1.0, 9.5, 2).expect("supported");
        let b = integrate(&whole, 1.0, 9.5, 2).expect("supported");
        assert_eq!(outcome(&a), outcome(&b));
        assert!(a.dropped_cut_row && !b.dropped_cut_row);
        assert!(
            a.reasons
                .iter()
                .any(|r| r == "benchmark_window_not_bracketed"),
            "{:?}",
            a.reasons
        );
        // A cut row after the bracketing samples: the same energy as the file
        // without it.
        std::fs::write(&cut, monitor_csv(10, Some("61"))).expect("w");
        let mut removed = monitor_csv(10, None);
        removed.push_str("11, 0, 300.00 W\n");
        std::fs::write(&whole, &removed).expect("w");
        let a = integrate(&cut, 1.0, 9.5, 2).expect("supported");
        let b = integrate(&whole, 1.0, 9.5, 2).expect("supported");
        assert!(a.totals.is_some(), "{:?}", a.reasons);
        assert_eq!(outcome(&a), outcome(&b));
        // A file that ends with its newline loses nothing; a header alone
        // without one is still a header.
        std::fs::write(&whole, monitor_csv(10, None)).expect("w");
        assert!(!integrate(&whole, 1.0, 9.5, 2).expect("ok").dropped_cut_row);
        std::fs::write(&whole, "timestamp, index, power.draw [W]").expect("w");
        let h = integrate(&whole, 1.0, 9.5, 2).expect("ok");
        assert!(!h.dropped_cut_row);
        assert_eq!(h.reasons, ["no_usable_power_samples"]);
    }

    /// A 200 000-row CSV is read whole: every row near the window counted
    /// for its GPU and each GPU's energy integrated over the window (an
    /// assertion on the work done, not on a clock).
    #[test]
    fn large_csv_is_read_whole() {
        const ROWS: u32 = 200_000;
        const GPUS: u32 = 8;
        let (start, end) = (10.0, 1990.0);
        let d = tempfile::tempdir().expect("tmp");
        let csv = d.path().join("m.csv");
        let mut s = String::from("timestamp,gpu,power\n");
        // Rows within MAX_SAMPLE_GAP_S of the window are the ones kept.
        let mut kept = vec![0_usize; GPUS as usize];
        for i in 0..ROWS {
            let t = f64::from(i) * 0.01;
            let gpu = i % GPUS;
            s.push_str(&format!("{t},{gpu},{}\n", 100 + gpu));
            if t >= start - MAX_SAMPLE_GAP_S && t <= end + MAX_SAMPLE_GAP_S {
                kept[gpu as usize] += 1;
            }
        }
        std::fs::write(&csv, s).expect("w");
        let r = integrate(&csv, start, end, i64::from(GPUS)).expect("supported");
        assert!(r.reasons.is_empty(), "{:?}", r.reasons);
        assert_eq!(r.observed_gpu_ids.len(), GPUS as usize);
        let want: Vec<(String, usize)> = kept
            .iter()
            .enumerate()
            .map(|(g, n)| (g.to_string(), *n))
            .collect();
        assert_eq!(r.per_gpu_sample_counts, want, "every kept row counted once");
        assert!(
            kept.iter().sum::<usize>() > 190_000,
            "the window covers most rows"
        );
        // GPU g draws a constant 100 + g W across the window.
        assert_eq!(r.per_gpu_energy_j.len(), GPUS as usize);
        for (id, energy) in &r.per_gpu_energy_j {
            let watts = 100.0 + id.parse::<f64>().expect("numeric id");
            let want = watts * (end - start);
            assert!(
                (energy - want).abs() < 1e-6 * want,
                "GPU {id}: {energy} J, want {want} J"
            );
        }
    }

    #[test]
    fn gpu_ids_sort_numerically_first() {
        let mut v = vec!["10", "b", "2", "a", "01"];
        v.sort_by(|a, b| gpu_order(a, b));
        assert_eq!(v, ["01", "2", "10", "a", "b"]);
        assert_eq!(py_round(0.125, 2), 0.12);
        assert_eq!(py_round(1234.5675, 3), 1234.568);
    }
}
