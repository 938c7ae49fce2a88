//! perf-changelog.yaml processing shared by check-changelog and generate-matrix changelog: git access, diff additions, entry schema, byte-level rules.
