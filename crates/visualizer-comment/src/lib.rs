//! Library behind the `visualizer-comment` binary: one sticky PR comment with the results and dashboard links.
