#!/usr/bin/env python3
"""Readable views of the JSON the demo's tools print (scripts/demo), so the
demo needs no jq: python3 -B scripts/demo_show.py <view> FILE...

Views: matrix (generate-matrix rows, one line each with TP/EP), evals (the
same as a short table of eval rows), priority (rows per bucket), canary,
policy, legs (`generate-matrix split` per part: the leg jobs as GitHub
names them, written as the run's jobs list), jobs (plays back the recorded
benchmark results through `collect-results process`), success-rate (runs
`success-rate` against a loopback stand-in of GitHub's jobs API serving
that list), baseline (a copy 10 % slower), comment (the head of the
rendered comment, up to its first code block).
"""

import http.server
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading


def load(path):
    with open(path) as f:
        return json.load(f)


def table(header, rows):
    """A plain aligned text table."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda cells: "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    print(line(header))
    print(line(["-" * w for w in widths]))
    for r in rows:
        print(line(r))


def worker(w):
    """TP/EP of one worker group, e.g. `TP8 EP8 DPA`."""
    s = f"TP{w['tp']} EP{w.get('ep', 1)}"
    if w.get("pp", 1) != 1:
        s += f" PP{w['pp']}"
    if w.get("dp-attn"):
        s += " DPA"
    return s


def topology(r):
    if "prefill" in r:
        p, d = r["prefill"], r["decode"]
        return f"{p['num-worker']}P({worker(p)}) x {d['num-worker']}D({worker(d)})"
    return worker(r)


def conc(r):
    c = r["conc"]
    return ",".join(map(str, c)) if isinstance(c, list) else c


def matrix(path):
    rows = load(path)
    print(f"  {len(rows)} jobs")
    table(
        ["exp-name", "kind", "runner", "TP/EP", "conc", "eval"],
        [[r["exp-name"],
          ("multi-node " if "prefill" in r else "single-node ") + r.get("scenario-type", "fixed-seq-len"),
          r["runner"], topology(r), conc(r), "yes" if r.get("run-eval") else "-"]
         for r in rows],
    )


def evals(path):
    rows = load(path)
    print(f"  {len(rows)} eval rows")
    table(
        ["exp-name", "runner", "isl/osl", "TP/EP", "conc", "eval-only"],
        [[r["exp-name"], r["runner"], f"{r['isl']}/{r['osl']}", topology(r), conc(r),
          "yes" if r.get("eval-only") else "-"] for r in rows],
    )


def priority(path):
    m = load(path)
    rows = [[bucket, topology(r), r["conc"], r.get("priority", "-")]
            for bucket, rs in m.get("single_node", {}).items() for r in rs]
    table(["bucket", "TP/EP", "conc", "priority"], rows)


def canary(path):
    m = load(path)
    c = [f"{r['exp-name']} {topology(r)} conc {r['conc']}" for r in m["canary-config"]]
    print("  canary first: " + ("; ".join(c) or "none"))
    rest = m["remaining-search-space-config"]["single_node"]
    print("  then: " + ", ".join(f"{k} {len(v)} row{'' if len(v) == 1 else 's'}"
                                 for k, v in rest.items()))


def policy(path):
    pairs = ", ".join(f"{k}={json.dumps(v)}" for k, v in load(path).items())
    print(textwrap.fill(pairs, width=100, initial_indent="  ", subsequent_indent="  "))


def legs(ssc, bin_dir, jobs_file):
    """The legs of every part as the leg workflow names its jobs: setup's
    `generate-matrix split` lists the parts (the canary's first), each
    part's plan job cuts its legs out (`--family`), and GitHub names a leg
    `<caller job> / <part title> / <leg name>`. The names, with the jobs
    around them, are written as the run's jobs list (the API's shape)."""
    gm = os.path.join(bin_dir, "generate-matrix")

    def split(*args, **env):
        # Outside Actions: the outputs as one JSON object on stdout.
        env = dict(os.environ, **env)
        for k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
            env.pop(k, None)
        p = subprocess.run([gm, "split", "--input", ssc, *args], capture_output=True, text=True,
                           env=env)
        if p.returncode != 0:
            sys.exit(f"generate-matrix split failed:\n{p.stderr}")
        return json.loads(p.stdout)

    top = split(INPUT_WITHOUT_CANARY="true")
    parts = [p for k in ("canary-parts", "benchmark-parts", "agentic-parts", "eval-parts")
             for p in json.loads(top.get(k) or "[]")]
    names = []
    for part in parts:
        out = split("--family", part["family"], "--part", str(part["part"]),
                    INPUT_WITHOUT_CANARY="true")
        title = part["title"] + (f" ({part['part']}/{part['parts']})" if part["parts"] != 1 else "")
        for leg in json.loads(out["legs"]):
            names.append((f"sweep / {title} / {leg['name']}", leg["config"]["runner"]))
    print(f"  {len(names)} legs in {len(parts)} parts (the canary's first):")
    for n, _ in names:
        print(f"    {n}")
    fixed = ["sweep / policy", "sweep / check-changelog", "sweep / setup", "sweep / collect-results"]
    jobs = [{"name": n, "status": "completed", "conclusion": "success", "run_attempt": 1,
             "labels": ["ubuntu-latest"], "runner_name": "GitHub Actions 1"} for n in fixed]
    # Every leg ran on the demo's one machine (the raw results' h200-cw_00).
    jobs += [{"name": n, "status": "completed", "conclusion": "success", "run_attempt": 1,
              "labels": [runner], "runner_name": "h200-cw_00"} for n, runner in names]
    for i, j in enumerate(jobs):
        j["id"] = 1000 + i
        j["run_id"] = 1
    with open(jobs_file, "w") as f:
        json.dump({"total_count": len(jobs), "jobs": jobs}, f, indent=1)


def success_rate(jobs_file, bin_dir, runner_config, stats_name, by_runner):
    """`success-rate` as calc-success-rate runs it, against a loopback
    stand-in of the three GitHub calls it makes (the token check, the run,
    its jobs), which serves the jobs list `legs` wrote."""
    with open(jobs_file) as f:
        jobs = f.read()
    routes = {"/user": '{"login": "demo"}',
              "/repos/demo/bench/actions/runs/1": '{"id": 1, "name": "Run Sweep"}',
              "/repos/demo/bench/actions/runs/1/jobs": jobs}

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = routes.get(self.path.split("?")[0])
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write((body or '{"message": "Not Found"}').encode())

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, GITHUB_API_URL=f"http://127.0.0.1:{server.server_port}",
               GITHUB_TOKEN="demo-token", GITHUB_REPOSITORY="demo/bench", GITHUB_RUN_ID="1")
    env.pop("GITHUB_STEP_SUMMARY", None)
    p = subprocess.run([os.path.join(bin_dir, "success-rate"), stats_name, "--runner-config",
                        runner_config, "--by-runner", by_runner], env=env, text=True,
                       capture_output=True)
    server.shutdown()
    for line in (p.stdout + p.stderr).splitlines():
        print("  " + line)
    if p.returncode != 0:
        sys.exit(f"success-rate failed (exit {p.returncode})")


def jobs(canary_file, tmp, ex, bin_dir):
    """One benchmark job per row: the recorded raw result goes through
    `collect-results process` as the runner's job would run it."""
    m = load(canary_file)
    rest = m["remaining-search-space-config"]["single_node"]
    rows = list(m["canary-config"]) + [r for k in ("1k1k", "8k1k") for r in rest.get(k, [])]
    out = []
    for r in rows:
        # A field as jq's `tostring` renders it (false, not False).
        f = lambda k, d="": (lambda v: json.dumps(v) if isinstance(v, bool) else str(v))(r.get(k, d))
        node = "h200-cw_00"
        name = (f"{f('exp-name')}_{f('precision')}_{f('framework')}_tp{f('tp')}-pp{f('pp', 1)}"
                f"-dcp{f('dcp-size', 1)}-pcp{f('pcp-size', 1)}-ep{f('ep')}-dpa{f('dp-attn')}"
                f"_disagg-{f('disagg')}_spec-{f('spec-decoding')}_conc{f('conc')}_{node}"
                f"_recipe-{f('recipe-fingerprint')[:16]}")
        job = os.path.join(tmp, "jobs", name)
        os.makedirs(job, exist_ok=True)
        # The "GPU run": play back the recorded benchmark_serving output.
        shutil.copy(os.path.join(ex, "raw", f"{f('exp-name')}_tp{f('tp')}_conc{f('conc')}.json"),
                    os.path.join(job, f"{name}.json"))
        env = dict(os.environ, RUNNER_TYPE=f("runner"), FRAMEWORK=f("framework"),
                   PRECISION=f("precision"), SPEC_DECODING=f("spec-decoding"),
                   RESULT_FILENAME=name, ISL=f("isl"), OSL=f("osl"), DISAGG=f("disagg"),
                   MODEL_PREFIX=f("model-prefix"), IMAGE=f("image"), TP=f("tp"),
                   EP_SIZE=f("ep"), DP_ATTENTION=f("dp-attn"),
                   RECIPE_FINGERPRINT=f("recipe-fingerprint"))
        p = subprocess.run([os.path.join(bin_dir, "collect-results"), "process"], cwd=job,
                           env=env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"collect-results process failed for {name}:\n{p.stderr}")
        res = os.path.join(tmp, "results", f"bmk_{name}")
        os.makedirs(res, exist_ok=True)
        shutil.copy(os.path.join(job, f"agg_{name}.json"), res)
        a = load(os.path.join(job, f"agg_{name}.json"))
        out.append([a["hw"], a["conc"], f"TP{a['tp']} EP{a.get('ep', 1)}",
                    f"{a['tput_per_gpu']:.1f}", f"{a['mean_ttft']:.3f}", f"{a['mean_tpot']:.4f}"])
    table(["hw", "conc", "TP/EP", "tput/GPU", "mean TTFT", "mean TPOT"], out)


def baseline(src, dst):
    """The demo's baseline: every point 10 % slower than the new run, so
    the run improves, except the first, 10 % faster: one regression."""
    rows = load(src)
    for i, r in enumerate(rows):
        f = 1 / 1.1 if i > 0 else 1.1
        r["tput_per_gpu"] *= f
        r["output_tput_per_gpu"] *= f
    print(f"  {len(rows)} baseline points: {len(rows) - 1} slower than the run, 1 faster")
    with open(dst, "w") as f:
        json.dump(rows, f)


def comment(path):
    with open(path) as f:
        lines = f.read().splitlines()
    shown = []
    for line in lines:
        if line.startswith("```"):
            break
        shown.append(line)
    for line in shown:
        print("  " + line)
    if len(shown) < len(lines):
        print(f"  ... ({len(lines) - len(shown)} more lines: the chart and details)")


VIEWS = {"matrix": matrix, "evals": evals, "priority": priority, "canary": canary,
         "policy": policy, "legs": legs, "jobs": jobs, "success-rate": success_rate,
         "baseline": baseline, "comment": comment}

if __name__ == "__main__":
    VIEWS[sys.argv[1]](*sys.argv[2:])
