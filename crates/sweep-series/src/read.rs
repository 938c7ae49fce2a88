//! A series file of the folder store read for its series only, newest line
//! first.
//!
//! Of each line, the reader keeps the run (named by the index, so each run
//! is held once), the row's identity fields ([`crate::series::IDENTITY`]),
//! its image and the metrics asked for; every other field is checked as
//! JSON and dropped without being built. A point's identity is made once
//! per distinct set of identity values of the file (a file holds a handful
//! of points), not once per line.
//!
//! Reading from the end lets a comparison stop early: the lines of a file
//! are in the order of the index (`runs.jsonl`, checked here and by
//! `verify`), so once each wanted point has its newest rows and every run
//! above the lines read is older than all of them, no older line can
//! change what is kept (a backfill, which appends old runs after new ones,
//! is read through).
//!
//! The store's rules are the same as for a whole read: a line that is not
//! JSON, not of the format, or out of the index's order is corrupt, named
//! by file and line, and refused.

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::series::{IDENTITY, PointId, PointRow, Scope, Series, build, point_id};
use sweep_model::fsio::{ReadError, open_regular};

use crate::record::{
    FORMAT, IndexLine, Kind, Line, MAX_FILE_BYTES, MAX_LINE_BYTES, RunKey, RunRef, StoreError,
};

/// The runs of the index as the reader uses them.
#[derive(Debug)]
pub(crate) struct RunIndex {
    /// Run → position in the index.
    position: HashMap<RunKey, usize>,
    runs: Vec<Arc<RunRef>>,
    /// Rank of each position in the order main ran the runs.
    rank: Vec<usize>,
    /// Per position p, the highest rank among positions before p.
    newest_before: Vec<Option<usize>>,
}

impl RunIndex {
    /// Whether run `run_id` attempt `attempt` is in the index.
    pub(crate) fn has(&self, run_id: u64, attempt: u32) -> bool {
        self.position.contains_key(&(run_id, attempt))
    }

    pub(crate) fn new(lines: &[IndexLine]) -> RunIndex {
        let runs: Vec<Arc<RunRef>> = lines.iter().map(|l| Arc::new(l.run.clone())).collect();
        let mut by_order: Vec<usize> = (0..runs.len()).collect();
        by_order
            .sort_by(|&a, &b| crate::series::order(&runs[a]).cmp(&crate::series::order(&runs[b])));
        let mut rank = vec![0; runs.len()];
        for (r, &p) in by_order.iter().enumerate() {
            rank[p] = r;
        }
        let mut newest_before = Vec::with_capacity(runs.len());
        let mut newest = None;
        for &r in &rank {
            newest_before.push(newest);
            newest = newest.max(Some(r));
        }
        RunIndex {
            position: runs.iter().enumerate().map(|(p, r)| (r.key(), p)).collect(),
            runs,
            rank,
            newest_before,
        }
    }
}

/// Where a key of a row goes.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Identity(usize),
    Image,
    Metric(usize),
}

/// The keys a read keeps, sorted for a binary search, and the keys of the
/// last row read in their order: the rows of a file are written by one
/// aggregate, so their keys come in the same order line after line, and a
/// key is mostly found by one comparison with the key at its place in the
/// row before.
struct Fields {
    slots: Vec<(&'static str, Slot)>,
    metrics: usize,
    last_row: RefCell<Vec<(String, Option<Slot>)>>,
    /// The identity fields of the row last read, in its order, encoded
    /// ([`Scalar::encode`] after each field's number): one identity, one
    /// key, whatever the values' spelling.
    key: RefCell<Vec<u8>>,
}

impl Fields {
    fn new(metrics: &[&'static str]) -> Fields {
        let mut slots: Vec<(&'static str, Slot)> = IDENTITY
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, Slot::Identity(i)))
            .collect();
        slots.push(("image", Slot::Image));
        for (j, m) in metrics.iter().enumerate() {
            if !slots.iter().any(|(k, _)| k == m) {
                slots.push((m, Slot::Metric(j)));
            }
        }
        slots.sort_by_key(|(k, _)| *k);
        Fields {
            slots,
            metrics: metrics.len(),
            last_row: RefCell::new(Vec::new()),
            key: RefCell::new(Vec::new()),
        }
    }

    /// Where the `place`-th key of a row goes.
    fn slot(&self, place: usize, key: &str) -> Option<Slot> {
        let mut last = self.last_row.borrow_mut();
        if let Some((k, slot)) = last.get(place)
            && k == key
        {
            return *slot;
        }
        let slot = self
            .slots
            .binary_search_by_key(&key, |(k, _)| k)
            .ok()
            .map(|i| self.slots[i].1);
        if place < last.len() {
            last[place] = (key.to_string(), slot);
        } else {
            last.push((key.to_string(), slot));
        }
        slot
    }
}

/// The size of a read from the end of a file: about 170 rows, so a
/// comparison that needs a point's newest 200 runs of a configuration of 7
/// points reads past them by less than a chunk.
const CHUNK_BYTES: u64 = 256 * 1024;

/// The lines of a file from the last up, read a chunk at a time from its
/// end, so that a reader that stops early reads only the tail.
struct Backward<'p> {
    path: &'p Path,
    file: File,
    /// File offset of `buf[0]`.
    pos: u64,
    /// `buf[..end]` is what is not yet handed out: file bytes
    /// `pos..pos + end`, up to (not including) the newline of the last line
    /// handed out.
    buf: Vec<u8>,
    end: usize,
    /// The first line of the file has been handed out.
    finished: bool,
    /// Bytes read at a time.
    chunk: u64,
}

impl<'p> Backward<'p> {
    /// Opens `path` (a regular file of at most `MAX_FILE_BYTES`); `None`
    /// for an empty file.
    fn open(path: &'p Path, chunk: u64) -> Result<Option<Backward<'p>>, StoreError> {
        let (file, len) = open_regular(path)?;
        if len > MAX_FILE_BYTES {
            return Err(StoreError::Read(ReadError::TooLarge {
                path: path.to_path_buf(),
                size: len,
                limit: MAX_FILE_BYTES,
            }));
        }
        if len == 0 {
            return Ok(None);
        }
        let mut r = Backward {
            path,
            file,
            pos: len,
            buf: Vec::new(),
            end: 0,
            finished: false,
            chunk: chunk.max(1),
        };
        r.extend()?;
        if r.buf.last() != Some(&b'\n') {
            let start = memchr::memrchr(b'\n', &r.buf).map_or(0, |i| i + 1);
            return Err(r.corrupt(
                r.pos + start as u64,
                "the last line has no newline (an append that did not finish)".into(),
            ));
        }
        r.end -= 1;
        Ok(Some(r))
    }

    /// Reads the chunk before `pos` in front of what is not handed out yet.
    fn extend(&mut self) -> Result<(), StoreError> {
        let from = self.pos.saturating_sub(self.chunk);
        let size = usize::try_from(self.pos - from).unwrap_or(0);
        let mut chunk = vec![0; size + self.end];
        let io = |source| {
            StoreError::Read(ReadError::Io {
                path: self.path.to_path_buf(),
                source,
            })
        };
        self.file.seek(SeekFrom::Start(from)).map_err(io)?;
        self.file.read_exact(&mut chunk[..size]).map_err(io)?;
        chunk[size..].copy_from_slice(&self.buf[..self.end]);
        self.buf = chunk;
        self.end += size;
        self.pos = from;
        Ok(())
    }

    /// The next line up: its file offset and its range in `buf`.
    fn next_line(&mut self) -> Result<Option<(u64, std::ops::Range<usize>)>, StoreError> {
        loop {
            if self.finished {
                return Ok(None);
            }
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[..self.end]) {
                let line = i + 1..self.end;
                self.end = i;
                return Ok(Some((self.pos + line.start as u64, line)));
            }
            if self.pos == 0 {
                self.finished = true;
                return Ok(Some((0, 0..self.end)));
            }
            if self.end > MAX_LINE_BYTES {
                return Err(self.corrupt(
                    self.pos,
                    format!("the line is longer than {MAX_LINE_BYTES} bytes"),
                ));
            }
            self.extend()?;
        }
    }

    /// A corrupt line at file offset `at`, named by its line number.
    fn corrupt(&self, at: u64, cause: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.to_path_buf(),
            line: line_number(self.path, at).unwrap_or(0),
            cause,
        }
    }
}

/// The number of the line at byte offset `at` of `path` (an error's path
/// only: the file is read again up to there).
fn line_number(path: &Path, at: u64) -> Result<usize, ReadError> {
    let (file, _) = open_regular(path)?;
    let mut before = file.take(at);
    let mut chunk = vec![0; 64 * 1024];
    let mut newlines = 0;
    loop {
        let n = before.read(&mut chunk).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if n == 0 {
            return Ok(newlines + 1);
        }
        newlines += memchr::memchr_iter(b'\n', &chunk[..n]).count();
    }
}

/// Reads the series of one file of the store (see the module).
pub(crate) fn series(
    path: &Path,
    index: &RunIndex,
    metrics: &[&'static str],
    scope: Scope<'_>,
) -> Result<Series, StoreError> {
    series_in_chunks(path, CHUNK_BYTES, index, metrics, scope)
}

/// The points of one read: each distinct identity once, named by a number.
#[derive(Default)]
struct Points {
    /// Identity values as the reader encodes them → number.
    by_key: HashMap<Vec<u8>, usize>,
    /// Number → identity, and whether the scope wants the point.
    ids: Vec<(PointId, bool)>,
    /// Per number, its rows (newest first), and the ranks of its newest
    /// rows (a min-heap of at most the scope's count), for the early stop.
    rows: Vec<Vec<PointRow>>,
    newest: Vec<BinaryHeap<Reverse<usize>>>,
    /// How many of the wanted points have been seen.
    wanted_seen: usize,
}

/// What a read keeps of the rows it is given, newest first: the rows of
/// the wanted points and, for the early stop, the ranks of their newest.
/// The folder's reader and the database's share it.
pub(crate) struct Collector<'s> {
    fields: Fields,
    metrics: &'s [&'static str],
    scope: Scope<'s>,
    points: Points,
    /// The image of the row before (rows of a run mostly share one).
    image: Arc<str>,
}

impl<'s> Collector<'s> {
    pub(crate) fn new(metrics: &'s [&'static str], scope: Scope<'s>) -> Collector<'s> {
        Collector {
            fields: Fields::new(metrics),
            metrics,
            scope,
            points: Points::default(),
            image: Arc::from(""),
        }
    }

    /// Reads a row object's text for what the collector keeps.
    pub(crate) fn parse_row<'de>(&self, text: &'de str) -> Result<ReadRow<'de>, String> {
        whole_text(text, RowSeed(&self.fields))
    }

    /// Keeps the benchmark `row` just read (with [`Collector::parse_row`]
    /// or as part of its line) of `run`, whose rank in the order main ran
    /// the runs is `rank`. `whole` reads the whole row, for an identity not
    /// seen before.
    pub(crate) fn keep(
        &mut self,
        row: ReadRow<'_>,
        run: &Arc<RunRef>,
        rank: usize,
        whole: impl FnOnce() -> Result<Map<String, Value>, String>,
    ) -> Result<(), String> {
        let id = {
            let key = self.fields.key.borrow();
            match self.points.by_key.get(key.as_slice()) {
                Some(&id) => id,
                None => {
                    let point = point_id(&whole()?);
                    self.points.add(key.clone(), point, self.scope)
                }
            }
        };
        if !self.points.ids[id].1 {
            return Ok(());
        }
        if let Some(n) = self.scope.newest() {
            let heap = &mut self.points.newest[id];
            heap.push(Reverse(rank));
            if heap.len() > n {
                heap.pop();
            }
        }
        let name = row.image.as_deref().unwrap_or("");
        if *self.image != *name {
            self.image = Arc::from(name);
        }
        self.points.rows[id].push(PointRow {
            run: Arc::clone(run),
            image: Arc::clone(&self.image),
            values: row.values,
        });
        Ok(())
    }

    /// Whether every wanted point has its newest rows, all newer than any
    /// row still unread (`unread`: the newest rank among them).
    pub(crate) fn done(&self, unread: Option<usize>) -> bool {
        self.points.done(self.scope, unread)
    }

    /// The series of the rows kept.
    pub(crate) fn finish(self) -> Series {
        let groups = self
            .points
            .ids
            .into_iter()
            .zip(self.points.rows)
            .filter_map(|((id, wanted), mut rows)| {
                rows.reverse();
                wanted.then_some((id, rows))
            });
        build(groups, self.metrics, self.scope.newest())
    }
}

/// [`series`] reading `chunk` bytes at a time.
fn series_in_chunks(
    path: &Path,
    chunk: u64,
    index: &RunIndex,
    metrics: &[&'static str],
    scope: Scope<'_>,
) -> Result<Series, StoreError> {
    let Some(mut lines) = Backward::open(path, chunk)? else {
        return Ok(Series::new());
    };
    let mut kept = Collector::new(metrics, scope);
    let mut below: Option<usize> = None; // position of the run of the line below
    while let Some((offset, range)) = lines.next_line()? {
        let text = &lines.buf[range];
        let line = match parse(text, &kept.fields) {
            Ok(line) => line,
            Err(cause) => return Err(lines.corrupt(offset, cause)),
        };
        // Rows of a run not in the index are an append that did not finish
        // (`verify` names them); they are not part of the history.
        let Some(&p) = index.position.get(&line.run) else {
            continue;
        };
        if let Some(b) = below {
            if p > b {
                let cause = format!(
                    "run {} attempt {} is above run {} attempt {}, which the index has before \
                     it (a file's lines are in the order of {})",
                    line.run.0,
                    line.run.1,
                    index.runs[b].run_id,
                    index.runs[b].attempt,
                    crate::record::INDEX
                );
                return Err(lines.corrupt(offset, cause));
            }
            if p < b && kept.done(index.newest_before[b]) {
                break;
            }
        }
        below = Some(p);
        if line.kind != Kind::Benchmark {
            continue;
        }
        // A new identity (a handful per file) is made from the whole line.
        let whole = || {
            serde_json::from_slice::<Line>(text)
                .map(|l| l.row)
                .map_err(|e| e.to_string())
        };
        kept.keep(line.row, &index.runs[p], index.rank[p], whole)
            .map_err(|cause| lines.corrupt(offset, cause))?;
    }
    Ok(kept.finish())
}

impl Points {
    /// Numbers a new identity (encoded as `key`).
    fn add(&mut self, key: Vec<u8>, point: PointId, scope: Scope<'_>) -> usize {
        // Two encodings of one identity (its fields in another order) share
        // the point's rows.
        let id = match self.ids.iter().position(|(p, _)| *p == point) {
            Some(id) => id,
            None => {
                let wanted = match scope {
                    Scope::All => true,
                    Scope::Newest { points, .. } => points.contains(&point),
                };
                self.wanted_seen += usize::from(wanted && matches!(scope, Scope::Newest { .. }));
                self.ids.push((point, wanted));
                self.rows.push(Vec::new());
                self.newest.push(BinaryHeap::new());
                self.ids.len() - 1
            }
        };
        self.by_key.insert(key, id);
        id
    }

    /// Whether every wanted point has its newest rows, all newer than any
    /// run still unread (`unread`: the newest rank among them).
    fn done(&self, scope: Scope<'_>, unread: Option<usize>) -> bool {
        let Scope::Newest { rows: n, points } = scope else {
            return false;
        };
        self.wanted_seen == points.len()
            && self
                .ids
                .iter()
                .zip(&self.newest)
                .filter(|((_, wanted), _)| *wanted)
                .all(|(_, heap)| {
                    heap.len() >= n && heap.peek().is_some_and(|Reverse(r)| Some(*r) > unread)
                })
    }
}

/// `text` read by `seed`, nothing after it but white space.
fn whole_text<'de, S: DeserializeSeed<'de>>(text: &'de str, seed: S) -> Result<S::Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    seed.deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| e.to_string())
}

/// One line, or why it is corrupt.
fn parse<'de>(text: &'de [u8], fields: &Fields) -> Result<ReadLine<'de>, String> {
    if text.len() > MAX_LINE_BYTES {
        return Err(format!("the line is longer than {MAX_LINE_BYTES} bytes"));
    }
    // Checked as UTF-8 in one pass, rather than string by string.
    let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
    let line = whole_text(text, LineSeed(fields))?;
    if line.v != FORMAT {
        return Err(format!("format {} is not {FORMAT}", line.v));
    }
    Ok(line)
}

/// A line as the reader keeps it.
struct ReadLine<'de> {
    v: u32,
    run: RunKey,
    kind: Kind,
    row: ReadRow<'de>,
}

/// The kept fields of a row (its identity is encoded in `Fields::key`).
pub(crate) struct ReadRow<'de> {
    image: Option<Cow<'de, str>>,
    values: Vec<Option<f64>>,
}

/// An identity value: a scalar borrowed from the line where it can be.
#[derive(Debug)]
enum Scalar<'de> {
    Str(Cow<'de, str>),
    U(u64),
    I(i64),
    F(f64),
    Bool(bool),
    Null,
    Other(Value),
}

impl Scalar<'_> {
    /// Appends bytes that tell this value from any other to `key`: its
    /// kind, then its content (fixed-size, or length-prefixed).
    fn encode(&self, key: &mut Vec<u8>) {
        let mut text = |tag: u8, t: &str| {
            key.push(tag);
            key.extend_from_slice(&(t.len() as u64).to_le_bytes());
            key.extend_from_slice(t.as_bytes());
        };
        match self {
            Scalar::Str(s) => text(b's', s),
            Scalar::Other(v) => text(b'o', &v.to_string()),
            Scalar::U(u) => {
                key.push(b'u');
                key.extend_from_slice(&u.to_le_bytes());
            }
            Scalar::I(i) => {
                key.push(b'i');
                key.extend_from_slice(&i.to_le_bytes());
            }
            Scalar::F(f) => {
                key.push(b'f');
                key.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Scalar::Bool(b) => key.extend_from_slice(&[b'b', u8::from(*b)]),
            Scalar::Null => key.push(b'n'),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(s.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::U(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::I(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::F(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<Scalar<'de>, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(s)).map(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Scalar<'de>, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(m)).map(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A metric's value when it is a number; anything else is read and dropped
/// (a gap in that metric's series).
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(Some(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Number, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Number, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The run of a line: its id and attempt (the rest is the index's).
#[derive(Deserialize)]
struct RunId {
    run_id: u64,
    attempt: u32,
}

/// Reads a line with the keys a read keeps.
struct LineSeed<'f>(&'f Fields);

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = ReadLine<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ReadLine<'de>, D::Error> {
        struct V<'f>(&'f Fields);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = ReadLine<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a line of the history")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ReadLine<'de>, A::Error> {
                let (mut v, mut run, mut kind, mut row) = (None, None, None, None);
                while let Some(Key(k)) = m.next_key::<Key<'de>>()? {
                    match k.as_ref() {
                        "v" => v = Some(m.next_value::<u32>()?),
                        "run" => run = Some(m.next_value::<RunId>()?),
                        "kind" => kind = Some(m.next_value::<Kind>()?),
                        "row" => row = Some(m.next_value_seed(RowSeed(self.0))?),
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let missing = |f| de::Error::missing_field(f);
                let run = run.ok_or_else(|| missing("run"))?;
                Ok(ReadLine {
                    v: v.ok_or_else(|| missing("v"))?,
                    run: (run.run_id, run.attempt),
                    kind: kind.ok_or_else(|| missing("kind"))?,
                    row: row.ok_or_else(|| missing("row"))?,
                })
            }
        }
        d.deserialize_map(V(self.0))
    }
}

/// Reads a row with the keys a read keeps.
struct RowSeed<'f>(&'f Fields);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ReadRow<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ReadRow<'de>, D::Error> {
        struct V<'f>(&'f Fields);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = ReadRow<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a row object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ReadRow<'de>, A::Error> {
                let mut row = ReadRow {
                    image: None,
                    values: vec![None; self.0.metrics],
                };
                let mut key = self.0.key.borrow_mut();
                key.clear();
                let mut place = 0;
                while let Some(Key(k)) = m.next_key::<Key<'de>>()? {
                    let slot = self.0.slot(place, &k);
                    place += 1;
                    match slot {
                        Some(Slot::Identity(i)) => {
                            key.extend_from_slice(&(i as u64).to_le_bytes());
                            m.next_value::<Scalar<'de>>()?.encode(&mut key);
                        }
                        Some(Slot::Image) => {
                            row.image = match m.next_value::<Scalar<'de>>()? {
                                Scalar::Str(s) => Some(s),
                                _ => None,
                            }
                        }
                        Some(Slot::Metric(j)) => row.values[j] = m.next_value::<Number>()?.0,
                        None => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(row)
            }
        }
        d.deserialize_map(V(self.0))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::series::series_in;
    use crate::store::{Run, Store};

    #[test]
    fn scalars_encode_apart() {
        let enc = |s: Scalar<'_>| {
            let mut k = Vec::new();
            s.encode(&mut k);
            k
        };
        let all = [
            enc(Scalar::Str("4".into())),
            enc(Scalar::U(4)),
            enc(Scalar::I(-4)),
            enc(Scalar::F(4.0)),
            enc(Scalar::Bool(true)),
            enc(Scalar::Null),
            enc(Scalar::Str("n".into())),
            enc(Scalar::Other(Value::from(vec![4]))),
        ];
        let distinct: BTreeSet<&Vec<u8>> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
    }

    fn seed_rows() -> Vec<Map<String, Value>> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/conformance/fixtures/seed-compare/baseline/agg_bmk.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        serde_json::from_str(&text).expect("rows")
    }

    /// Run `id` dated `minute` minutes into the day, its throughputs
    /// scaled by a little noise, without the rows `drop` says.
    fn run(id: u64, minute: u64, drop: impl Fn(usize) -> bool) -> Run {
        let rows = seed_rows()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !drop(*i))
            .map(|(i, mut r)| {
                let f = 1.0 + ((id * 7 + i as u64) % 11) as f64 / 100.0;
                let v = r["tput_per_gpu"].as_f64().expect("a number") * f;
                r.insert("tput_per_gpu".into(), Value::from(v));
                r
            })
            .collect();
        Run {
            run: RunRef {
                run_id: id,
                attempt: 1,
                commit: format!("{id:040x}"),
                date: format!("2026-11-01T{:02}:{:02}:00Z", minute / 60, minute % 60),
                pr: Some(id),
            },
            repo: "acme/bench".into(),
            event: "push".into(),
            benchmarks: rows,
            evals: Vec::new(),
        }
    }

    /// A store whose one file holds 30 runs in order, then a backfill of
    /// 10 older runs, then 10 newer runs of which the last 6 lack the last
    /// point, then the rows of an append that did not finish.
    fn store() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Store::new(dir.path());
        for id in 1..=30 {
            store.append(&run(id, 100 + id, |_| false)).expect("append");
        }
        for id in 101..=110 {
            store.append(&run(id, id - 100, |_| false)).expect("append");
        }
        let last = seed_rows().len() - 1;
        for id in 31..=40 {
            store
                .append(&run(id, 100 + id, |i| id > 34 && i == last))
                .expect("append");
        }
        let file = store.files().expect("files").remove(0);
        let path = dir.path().join(&file);
        let text = std::fs::read_to_string(&path).expect("read");
        let orphan = text
            .lines()
            .last()
            .expect("a line")
            .replace("\"run_id\":40,", "\"run_id\":999,");
        std::fs::write(&path, format!("{text}{orphan}\n")).expect("write");
        (dir, store, file)
    }

    const METRICS: &[&str] = &["tput_per_gpu", "median_ttft", "no_such_metric"];

    #[test]
    fn reading_from_the_end_in_any_chunk_size_equals_reading_every_line() {
        let (dir, store, file) = store();
        let path = dir.path().join(&file);
        let lines = store.lines(&file).expect("lines");
        let index = RunIndex::new(&store.runs().expect("runs"));
        let all: BTreeSet<PointId> = series_in(&lines, METRICS, Scope::All).into_keys().collect();
        assert_eq!(all.len(), seed_rows().len());
        // The point the newest runs lack.
        let last = seed_rows().pop().expect("a row");
        let one: BTreeSet<PointId> = [crate::series::point_id(&last)].into();
        let absent: BTreeSet<PointId> = ["{}".to_string()].into();
        let mut scopes = vec![Scope::All];
        for rows in [1, 5, 12, 45, 200] {
            for points in [&all, &one, &absent] {
                scopes.push(Scope::Newest { rows, points });
            }
        }
        for chunk in [7, 100, 5000, CHUNK_BYTES] {
            for scope in &scopes {
                let want = series_in(&lines, METRICS, *scope);
                let have = series_in_chunks(&path, chunk, &index, METRICS, *scope).expect("series");
                assert_eq!(have, want, "chunk {chunk}, {scope:?}");
            }
        }
        // The newest 12 of the point the last runs lack reach back past
        // the backfill (runs 101-110 are older than run 1).
        let s = series_in_chunks(
            &path,
            100,
            &index,
            METRICS,
            Scope::Newest {
                rows: 12,
                points: &one,
            },
        )
        .expect("series");
        let runs: Vec<u64> = s.values().next().expect("the point")["tput_per_gpu"]
            .iter()
            .map(|x| x.run.run_id)
            .collect();
        assert_eq!(runs, [23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34]);
    }

    #[test]
    fn a_comparison_stops_at_its_newest_rows_and_a_whole_read_refuses_what_lies_above() {
        let (dir, store, file) = store();
        let path = dir.path().join(&file);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("not json\n{text}")).expect("write");
        let index = RunIndex::new(&store.runs().expect("runs"));
        assert!(store.lines(&file).is_err());
        let wanted = seed_rows()
            .iter()
            .map(crate::series::point_id)
            .collect::<BTreeSet<_>>();
        for chunk in [7, CHUNK_BYTES] {
            let newest = Scope::Newest {
                rows: 5,
                points: &wanted,
            };
            let s = series_in_chunks(&path, chunk, &index, METRICS, newest).expect("tail");
            assert_eq!(s.len(), wanted.len());
            let err = series_in_chunks(&path, chunk, &index, METRICS, Scope::All)
                .expect_err("the whole file")
                .to_string();
            assert!(
                err.starts_with(&format!("{}:1: expected ident", path.display())),
                "{err}"
            );
        }
        assert!(store.verify().is_err());
    }

    #[test]
    fn a_corrupt_line_is_named_by_its_number_whichever_chunk_holds_it() {
        let (dir, store, file) = store();
        let path = dir.path().join(&file);
        let text = std::fs::read_to_string(&path).expect("read");
        let mut lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        lines[n - 3] = "{\"v\":1,\"run\":";
        std::fs::write(&path, format!("{}\n", lines.join("\n"))).expect("write");
        let index = RunIndex::new(&store.runs().expect("runs"));
        for chunk in [7, 100, CHUNK_BYTES] {
            let err = series_in_chunks(&path, chunk, &index, METRICS, Scope::All)
                .expect_err("corrupt")
                .to_string();
            assert!(
                err.starts_with(&format!("{}:{}: ", path.display(), n - 2)),
                "chunk {chunk}: {err}"
            );
        }
        // Cut short: the last line has no newline.
        std::fs::write(&path, &text[..text.len() - 1]).expect("write");
        let err = series_in_chunks(&path, 7, &index, METRICS, Scope::All)
            .expect_err("cut")
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{}:{n}: the last line has no newline",
                path.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn lines_out_of_the_index_order_are_refused_by_the_reader_and_verify() {
        let (dir, store, file) = store();
        let path = dir.path().join(&file);
        let text = std::fs::read_to_string(&path).expect("read");
        let rows = seed_rows().len();
        let mut lines: Vec<&str> = text.lines().collect();
        // The rows of run 1 after those of run 2.
        lines[..2 * rows].rotate_left(rows);
        std::fs::write(&path, format!("{}\n", lines.join("\n"))).expect("write");
        let index = RunIndex::new(&store.runs().expect("runs"));
        let err = series_in_chunks(&path, 100, &index, METRICS, Scope::All)
            .expect_err("out of order")
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{}:{rows}: run 2 attempt 1 is above run 1 attempt 1",
                path.display()
            )),
            "{err}"
        );
        let err = store.verify().expect_err("out of order").to_string();
        assert!(
            err.starts_with(&format!(
                "{}:{}: run 1 attempt 1 is below",
                path.display(),
                rows + 1
            )),
            "{err}"
        );
    }
}
