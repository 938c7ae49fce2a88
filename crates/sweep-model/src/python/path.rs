//! `str(pathlib.Path(...))`, as the reference prints paths in its messages
//! and output fields.

/// `str(pathlib.Path(p))`: repeated and trailing slashes and `.`
/// components dropped, `""` becomes `"."`.
#[must_use]
pub fn python_path(p: &str) -> String {
    let absolute = p.starts_with('/');
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// `str(Path(dir) / name)` for a `dir` already normalised by [`python_path`].
#[must_use]
pub fn python_path_join(dir: &str, name: &str) -> String {
    match dir {
        "." => name.to_owned(),
        "/" => format!("/{name}"),
        _ => format!("{dir}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_like_pathlib() {
        assert_eq!(python_path("eval_results/"), "eval_results");
        assert_eq!(python_path("./a//b/."), "a/b");
        assert_eq!(python_path(""), ".");
        assert_eq!(python_path("/x/"), "/x");
        assert_eq!(python_path_join(".", "f.json"), "f.json");
        assert_eq!(python_path_join("/", "f.json"), "/f.json");
        assert_eq!(python_path_join("a", "f.json"), "a/f.json");
    }
}
