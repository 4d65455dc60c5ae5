#!/usr/bin/env python3
"""ROCm's hip-tests (catch/unit) against a hip-remote worker: the steps of scripts/hip-tests.sh
after upstream's CMake has configured the tree.

  targets BUILD FAMILY...        the make targets of the families (one a line)
  collect BUILD SRC OUT FAMILY...
      after `make -k`: relinks every Catch2 program whose own objects did not all build with
      upstream's own link command minus the missing objects, and writes OUT/manifest.json: per
      family the programs (relative to OUT) and the files that did not build with their test
      cases counted from the source. Copies the programs and the files they read at run time
      (code objects, helper programs) under OUT.
  run OUT [--jobs N] [--timeout S] [--results DIR]
      runs every test case of the manifest as its own process (as ctest runs them), against the
      worker in HIP_REMOTE_WORKER, and writes DIR/results.tsv (one test case a line) and
      DIR/summary.md (per family: cases, passed, failed, of which unbuilt, skipped).

A test case is skipped when it prints HIP_SKIP_THIS_TEST (upstream's own marker: its disabled
list, HIP_CATCH_EXCLUDE_FILE, or a test's own HIP_SKIP_TEST), as ctest's SKIP_REGULAR_EXPRESSION
does. A file that does not build counts each of its test cases as failed.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Catch2 macros that declare test cases; a templated one declares one case per type.
TEST_MACRO = re.compile(r"^\s*(TEMPLATE_TEST_CASE|TEMPLATE_TEST_CASE_SIG|TEMPLATE_PRODUCT_TEST_CASE|TEST_CASE|HIP_TEST_CASE)\s*\(", re.M)
MAIN_OBJECT = "Main_Object.dir/main.cc.o"
SKIP_MARKER = "HIP_SKIP_THIS_TEST"
# Output kept per failed test case (the first failure's lines), so a report stays readable.
FAILURE_LINES = 4


def family_dir(build: Path, family: str) -> Path:
    return build / "catch_tests" / "unit" / family


def make_targets(build: Path, family: str) -> list[str]:
    out = subprocess.run(["make", "-C", str(family_dir(build, family)), "help"], capture_output=True, text=True).stdout
    skip = {"all", "clean", "depend", "edit_cache", "rebuild_cache", "test", "install", "package", "package_source", "build_tests", "list_install_components"}
    names = []
    for line in out.splitlines():
        if not line.startswith("... "):
            continue
        name = line[4:].split(" ")[0]
        if name in skip or name.startswith("install/") or re.search(r"\.(o|i|s)$", name):
            continue
        names.append(name)
    return names


def split_args(text: str, start: int) -> list[str]:
    """The top-level, comma-separated arguments of the call whose '(' is at text[start]."""
    depth, args, cur, i, quote = 0, [], [], start, None
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif c in "(<[{":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c in ")>]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return args


def count_cases(source: Path) -> int:
    """Test cases a source declares (a templated case counts once per type)."""
    text = source.read_text(errors="replace")
    total = 0
    for m in TEST_MACRO.finditer(text):
        kind = m.group(1)
        if kind.startswith("TEMPLATE"):
            args = split_args(text, m.end() - 1)
            first_type = 3 if kind == "TEMPLATE_TEST_CASE_SIG" else 2
            total += max(1, len(args) - first_type)
        else:
            total += 1
    return total


def catch_programs(build: Path, family: str):
    """(target, its directory, link command, own object paths) of the family's Catch2 programs."""
    fdir = family_dir(build, family)
    for link in sorted(fdir.glob("CMakeFiles/*.dir/link.txt")):
        cmd = link.read_text().strip()
        if MAIN_OBJECT not in cmd:
            continue
        target = link.parent.name[: -len(".dir")]
        own = [w for w in cmd.split() if w.startswith(f"CMakeFiles/{target}.dir/") and w.endswith(".o")]
        yield target, fdir, cmd, own


def source_of(src_family: Path, target: str, obj: str) -> Path:
    rel = obj[len(f"CMakeFiles/{target}.dir/") : -len(".o")]
    return (src_family / rel.replace("__/", "../")).resolve()


def collect(build: Path, src: Path, out: Path, families: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"families": {}}
    for family in families:
        src_family = src / "catch" / "unit" / family
        entry = {"programs": [], "unbuilt": []}
        for target, fdir, cmd, own in catch_programs(build, family):
            missing = [o for o in own if not (fdir / o).is_file()]
            for o in missing:
                source = source_of(src_family, target, o)
                entry["unbuilt"].append({"file": str(source.relative_to(src / "catch")), "cases": count_cases(source)})
            exe = fdir / target
            if missing and len(missing) < len(own):
                words = [w for w in cmd.split() if w not in missing]
                subprocess.run(" ".join(words), shell=True, cwd=fdir, check=False)
            if not exe.is_file():
                # Everything built but the link failed: every own file's cases count as failed.
                for o in own:
                    if o not in missing:
                        source = source_of(src_family, target, o)
                        entry["unbuilt"].append({"file": str(source.relative_to(src / "catch")), "cases": count_cases(source), "link": True})
                continue
            entry["programs"].append(f"unit/{family}/{target}")
        # The family's directory as the programs find it at run time (code objects, helpers).
        dest = out / "unit" / family
        dest.mkdir(parents=True, exist_ok=True)
        for item in fdir.iterdir():
            if item.is_file() and not item.name.endswith((".cmake", ".txt")) and item.name != "Makefile":
                shutil.copy2(item, dest / item.name)
        manifest["families"][family] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def catch_spec(name: str) -> str:
    """A test name as Catch2's command line matches it literally."""
    escaped = "".join("\\" + c if c in "\\,[]" else c for c in name)
    return "\\" + escaped if escaped[:1] in "~*" else escaped


def list_cases(program: Path) -> list[str] | None:
    try:
        res = subprocess.run([str(program), "--list-test-names-only"], capture_output=True, text=True, timeout=300, cwd=program.parent)
    except subprocess.TimeoutExpired:
        return None
    names = [l.rstrip() for l in res.stdout.splitlines() if l.strip() and not l.startswith(" ")]
    return names if names else None


def run_case(program: Path, name: str, timeout: float):
    t0 = time.monotonic()
    try:
        res = subprocess.run([str(program), catch_spec(name)], capture_output=True, text=True, errors="replace", timeout=timeout, cwd=program.parent)
    except subprocess.TimeoutExpired:
        return "fail", time.monotonic() - t0, f"timed out after {timeout:.0f} s"
    took = time.monotonic() - t0
    text = res.stdout + res.stderr
    if SKIP_MARKER in text:
        return "skip", took, ""
    if res.returncode == 0 and "No test cases matched" not in text:
        return "pass", took, ""
    lines = text.splitlines()
    why = []
    for i, line in enumerate(lines):
        if "FAILED" in line or "error:" in line.lower() or "fatal error condition" in line.lower():
            why = [l.strip() for l in lines[i : i + FAILURE_LINES * 2] if l.strip() and not set(l.strip()) <= set("-=.")][:FAILURE_LINES]
            break
    if not why:
        why = [l.strip() for l in lines[-FAILURE_LINES:] if l.strip()] or [f"exit status {res.returncode}"]
    if res.returncode < 0:
        why.insert(0, f"killed by signal {-res.returncode}")
    return "fail", took, " | ".join(why)


def run(out: Path, jobs: int, timeout: float, results: Path) -> int:
    manifest = json.loads((out / "manifest.json").read_text())
    results.mkdir(parents=True, exist_ok=True)
    rows = []
    work = []
    for family, entry in manifest["families"].items():
        for unbuilt in entry["unbuilt"]:
            what = "did not link" if unbuilt.get("link") else "did not build"
            for i in range(unbuilt["cases"]):
                rows.append((family, unbuilt["file"], f"(case {i + 1} of {unbuilt['file']})", "fail", 0.0, what, True))
        for rel in entry["programs"]:
            program = out / rel
            names = list_cases(program)
            if names is None:
                rows.append((family, rel, "(listing the test cases)", "fail", 0.0, "the program did not list its test cases", False))
                continue
            work += [(family, rel, program, n) for n in names]
    print(f"hip-tests: {len(work)} test cases in {sum(len(e['programs']) for e in manifest['families'].values())} programs; {jobs} at a time", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_case, p, n, timeout): (f, r, n) for f, r, p, n in work}
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            family, rel, name = futures[fut]
            status, took, why = fut.result()
            rows.append((family, rel, name, status, took, why, False))
            if status == "fail":
                print(f"  FAIL {family} {name}: {why[:300]}", flush=True)
            if done % 50 == 0:
                print(f"  ... {done}/{len(work)}", flush=True)
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    with open(results / "results.tsv", "w") as f:
        f.write("family\tprogram\ttest case\tstatus\tseconds\tfirst failure\n")
        for family, rel, name, status, took, why, _ in rows:
            f.write(f"{family}\t{rel}\t{name}\t{status}\t{took:.2f}\t{why.replace(chr(9), ' ')}\n")
    summary = summarize(rows)
    (results / "summary.md").write_text(summary)
    print(summary)
    return 0


def summarize(rows) -> str:
    fams: dict[str, list[int]] = {}
    for family, _, _, status, _, _, unbuilt in rows:
        c = fams.setdefault(family, [0, 0, 0, 0, 0])
        c[0] += 1
        c[{"pass": 1, "fail": 2, "skip": 4}[status]] += 1
        if unbuilt:
            c[3] += 1
    lines = ["| family | test cases | passed | failed | of which unbuilt | skipped | passed of run |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    tot = [0, 0, 0, 0, 0]
    for family in sorted(fams):
        c = fams[family]
        tot = [a + b for a, b in zip(tot, c)]
        lines.append(f"| {family} | {c[0]} | {c[1]} | {c[2]} | {c[3]} | {c[4]} | {pct(c)} |")
    lines.append(f"| **total** | **{tot[0]}** | **{tot[1]}** | **{tot[2]}** | **{tot[3]}** | **{tot[4]}** | **{pct(tot)}** |")
    return "\n".join(lines) + "\n\n(passed of run: passed / (passed + failed); skipped cases are upstream's disabled list and the tests' own skips)\n"


def pct(c) -> str:
    ran = c[1] + c[2]
    return f"{100.0 * c[1] / ran:.1f} %" if ran else "-"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "targets":
        build = Path(argv[2])
        for family in argv[3:]:
            for t in make_targets(build, family):
                print(t)
        return 0
    if cmd == "collect":
        collect(Path(argv[2]), Path(argv[3]), Path(argv[4]), argv[5:])
        return 0
    if cmd == "run":
        out = Path(argv[2])
        opts = dict(zip(argv[3::2], argv[4::2]))
        return run(out, int(opts.get("--jobs", "2")), float(opts.get("--timeout", "120")), Path(opts.get("--results", str(out / "results"))))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
