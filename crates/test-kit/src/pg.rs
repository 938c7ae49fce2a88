//! A throw-away PostgreSQL server on 127.0.0.1 for the database tests
//! (compare-results' baseline query, the history store's PostgreSQL
//! backend): `initdb` into a temp dir, `pg_ctl start` on an unused port,
//! stopped on drop. As root (CI here) the server runs as the `postgres`
//! system user, which PostgreSQL requires.

use std::path::PathBuf;
use std::process::Command;

/// A running server; stopped when dropped.
pub struct Server {
    /// `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth).
    pub url: String,
    bin: PathBuf,
    data: PathBuf,
    as_postgres: bool,
    port: u16,
    dir: tempfile::TempDir,
}

fn bin_dir() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if p.join("initdb").is_file() && p.join("pg_ctl").is_file() {
            return Some(p);
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").is_file() && p.join("pg_ctl").is_file())
        .collect();
    versions.sort();
    versions.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Server {
    fn command(&self, prog: &str) -> Command {
        let exe = self.bin.join(prog);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    /// Starts a server, or `None` (loudly) when PostgreSQL is not installed
    /// and this is not CI; in CI (`CI` set) that is a failure.
    ///
    /// # Panics
    /// When the server cannot be set up or started.
    #[must_use]
    pub fn start() -> Option<Self> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL server binaries (initdb, pg_ctl) not found: scripts/setup installs Debian's postgresql package"
            );
            eprintln!("!!! SKIPPED: PostgreSQL (initdb/pg_ctl) is not installed");
            return None;
        };
        let as_postgres = is_root();
        // As root the server runs as `postgres`, which must reach the
        // directory: /tmp rather than a TMPDIR that may sit under /root.
        let mut builder = tempfile::Builder::new();
        builder.prefix("sweepkit-pg");
        let dir = if as_postgres {
            builder.tempdir_in("/tmp")
        } else {
            builder.tempdir()
        }
        .expect("tempdir");
        if as_postgres {
            // postgres refuses to run as root: hand the directory to the
            // postgres system user.
            let st = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(st.success(), "chown of the temp dir to postgres failed");
        }
        let port = fake_github::unused_port().expect("port");
        let s = Self {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            bin,
            data: dir.path().join("data"),
            as_postgres,
            port,
            dir,
        };
        let out = s
            .command("initdb")
            .arg("-D")
            .arg(&s.data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(out.status.success(), "initdb failed: {}", text(&out.stderr));
        let sock = s.dir.path().to_path_buf();
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            sock.display()
        );
        let out = s
            .command("pg_ctl")
            .arg("-D")
            .arg(&s.data)
            .args(["-o", &opts, "-l"])
            .arg(sock.join("server.log"))
            .args(["-w", "-t", "60", "start"])
            .output()
            .expect("run pg_ctl");
        if !out.status.success() {
            let log = std::fs::read_to_string(sock.join("server.log")).unwrap_or_default();
            panic!("pg_ctl start failed: {}\n{log}", text(&out.stderr));
        }
        Some(s)
    }

    /// Runs `sql` with psql (stopping at the first error).
    ///
    /// # Panics
    /// When psql fails.
    pub fn psql(&self, sql: &str) {
        let out = self
            .command("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
            .output()
            .expect("run psql");
        assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}
