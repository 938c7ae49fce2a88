//! What can go wrong with the comment's inputs, and the URL check every
//! part that writes a link uses ([`crate::body`], [`crate::charts`],
//! [`crate::verdict`]). It depends on no other module of this crate, so the
//! modules that share it never import each other in a circle.

/// What can go wrong building a body (or a check run's text).
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("{what}: {cause}")]
    Input { what: String, cause: String },
    #[error("rendering templates/comment.md.j2: {0}")]
    Render(String),
}

/// A URL fit to sit in a markdown link: http(s), no spaces or characters
/// that would end the link.
pub fn check_url(what: &str, url: &str) -> Result<(), BodyError> {
    let bad = |cause: &str| BodyError::Input {
        what: what.into(),
        cause: format!("{cause}: {url:?}"),
    };
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(bad("not an http(s) URL"));
    }
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "()<>[]\"'`".contains(c))
    {
        return Err(bad("characters that cannot sit in a markdown link"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_that_would_break_a_link_are_refused() {
        assert!(check_url("u", "https://github.com/o/r/actions/runs/1").is_ok());
        assert!(check_url("u", "javascript:alert(1)").is_err());
        assert!(check_url("u", "https://x/y) [evil](https://e").is_err());
    }
}
