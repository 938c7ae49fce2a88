//! Python-compatible text and number conversions, in one place.
//!
//! The reference is Python, and several outputs depend on how Python spells
//! a value: the recipe fingerprint and the queue token are SHA-256 digests
//! of `json.dumps(..., sort_keys=True, separators=(",", ":"))`, messages
//! quote keys with `repr()`, eval tables print floats with `repr(float)`,
//! paths print as `str(pathlib.Path(...))`, and environment values are read
//! with `int()`/`float()`. Each of those has exactly one implementation here:
//!
//! - [`float`]: `repr(float)` ([`python_float_repr`]);
//! - [`json`]: `json.dumps` with sorted keys, compact separators and
//!   `ensure_ascii` ([`dumps_like_python`]);
//! - [`repr`]: `repr()` and `str()` of JSON-shaped values ([`python_repr`],
//!   [`python_repr_str`], [`python_repr_list`], [`python_str`]);
//! - [`path`]: `str(pathlib.Path(p))` and `Path / name` ([`python_path`],
//!   [`python_path_join`]);
//! - [`convert`]: `int()` and `float()` of strings and JSON values
//!   ([`python_int`], [`python_float`], [`python_int_of_value`],
//!   [`python_float_of_value`]).

pub mod convert;
pub mod float;
pub mod json;
pub mod path;
pub mod repr;

pub use convert::{python_float, python_float_of_value, python_int, python_int_of_value};
pub use float::python_float_repr;
pub use json::{dumps_like_python, write_dumps_like_python, write_json_string_like_python};
pub use path::{python_path, python_path_join};
pub use repr::{python_repr, python_repr_list, python_repr_str, python_str, python_str_or_empty};
