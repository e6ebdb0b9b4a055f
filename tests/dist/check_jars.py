#!/usr/bin/env python3
"""Checks the JARs of `make dist` (packaging/jars.sh) class by class against their engines.

For each riverlet-*.jar in --dist it lists the classes (zip entries ending in .class; the
META-INF/versions/<n>/ copies of a multi-release JAR count as the class they replace) and fails on

  1. any class outside io/riverlet/ that the JAR's target engine also ships (the engine's copy
     and ours would both be on one class path: whichever loads first wins), and
  2. any class outside io/riverlet/ at all (a third-party class not relocated under
     io/riverlet/shaded), unless ALLOWED below names its package for that kind of JAR with the
     reason it must keep its name;

and on a JAR that lacks native/linux-x86_64/libriverlet_jni.so, on a missing or unknown
riverlet JAR, and on an engine class list that lacks the classes the JAR relies on the engine
for (so a wrong or empty list cannot make the check pass).

Engine class lists (--engine NAME=SPEC, SPEC a directory whose *.jar files are read, or a file
naming JARs separated by ':' or newlines, as `mvn dependency:build-classpath` writes):
spark-3.5, spark-4.x, flink-1.20, flink-2.x. tests/dist/jars.sh passes them. The Java API JAR
(riverlet-java) has no engine: rule 2 alone.

python3 standard library only. Exit status 0 when every JAR passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import zipfile
from collections import Counter, defaultdict

NATIVE = "native/linux-x86_64/libriverlet_jni.so"
OURS = "io/riverlet/"

# Reason shared by every connector JAR: arrow-c-data's package keeps its name.
ARROW_C = (
    "arrow-c-data: its JNI library libarrow_cdata_jni exports Java_org_apache_arrow_c_jni_* "
    "symbols and looks up org/apache/arrow/c/jni/PrivateData, .../CDataJniException and "
    "org/apache/arrow/c/ArrayStreamExporter$ExportedArrayStreamPrivateData by name; the rest "
    "of the package shares package-private members with them (see the module POMs)"
)

# JAR kind -> (package prefix, reason) pairs that may stay unrelocated.
ALLOWED: dict[str, list[tuple[str, str]]] = {
    "java": [],
    "spark": [("org/apache/arrow/c/", ARROW_C + "; Spark ships no arrow-c-data")],
    "flink": [("org/apache/arrow/c/", ARROW_C + "; Flink ships no Arrow")],
}

# Classes the engine must provide for the JAR to work at all (the JAR leaves them out on
# purpose): checked in the engine's list so that a wrong list fails instead of passing.
ENGINE_MUST_HAVE = {
    "spark": [
        "org/apache/spark/sql/SparkSession.class",
        "org/apache/spark/sql/vectorized/ArrowColumnVector.class",
        "org/apache/arrow/vector/VectorSchemaRoot.class",
        "org/apache/arrow/memory/BufferAllocator.class",
    ],
    "flink": [
        "org/apache/flink/table/factories/DynamicTableFactory.class",
        "org/apache/flink/api/connector/source/Source.class",
    ],
}

# File name -> (kind, engine). <v> is the version packaging/version.sh prints.
JARS = [
    (re.compile(r"^riverlet-java-(?P<v>[^/]+)\.jar$"), "java", None),
    (re.compile(r"^riverlet-spark-3\.5_2\.12-(?P<v>[^/]+)\.jar$"), "spark", "spark-3.5"),
    (re.compile(r"^riverlet-spark-4\.x_2\.13-(?P<v>[^/]+)\.jar$"), "spark", "spark-4.x"),
    (re.compile(r"^riverlet-flink-1\.20-(?P<v>[^/]+)\.jar$"), "flink", "flink-1.20"),
    (re.compile(r"^riverlet-flink-2\.x-(?P<v>[^/]+)\.jar$"), "flink", "flink-2.x"),
]

VERSIONED = re.compile(r"^META-INF/versions/\d+/")


def class_name(entry: str) -> str | None:
    """The class an entry holds (META-INF/versions/<n>/ stripped), or None for a resource."""
    if not entry.endswith(".class"):
        return None
    name = VERSIONED.sub("", entry)
    if name.endswith("module-info.class"):
        return None
    return name


def classes_of(path: str) -> set[str]:
    with zipfile.ZipFile(path) as z:
        return {c for c in (class_name(n) for n in z.namelist()) if c}


def engine_jars(spec: str) -> list[str]:
    if os.path.isdir(spec):
        found = []
        for d, _, files in os.walk(spec):
            found += [os.path.join(d, f) for f in files if f.endswith(".jar")]
        return sorted(found)
    with open(spec, encoding="utf-8") as f:
        text = f.read()
    return [p for p in re.split(r"[:\n]", text) if p.strip().endswith(".jar")]


def load_engine(name: str, spec: str) -> tuple[set[str], int]:
    jars = engine_jars(spec)
    if not jars:
        raise SystemExit(f"check_jars: engine {name}: no JAR in {spec}")
    classes: set[str] = set()
    for j in jars:
        classes |= classes_of(j)
    return classes, len(jars)


def package(cls: str) -> str:
    return cls.rsplit("/", 1)[0] if "/" in cls else "(default package)"


def check(path: str, kind: str, engine: str | None, engine_classes: set[str] | None) -> list[str]:
    """Prints a report of one JAR; returns its failures."""
    failures: list[str] = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    classes = sorted({c for c in (class_name(n) for n in names) if c})
    ours = [c for c in classes if c.startswith(OURS)]
    shaded = [c for c in ours if c.startswith(OURS + "shaded/")]
    foreign = [c for c in classes if not c.startswith(OURS)]
    print(f"{os.path.basename(path)}: {len(classes)} classes, {len(ours)} under io/riverlet "
          f"({len(shaded)} relocated under io/riverlet/shaded), {len(foreign)} outside; "
          f"engine: {engine or 'none (a library)'}")

    if NATIVE not in names:
        failures.append(f"no {NATIVE}")

    if engine_classes is not None:
        missing = [c for c in ENGINE_MUST_HAVE.get(kind, []) if c not in engine_classes]
        for c in missing:
            failures.append(f"the {engine} class list lacks {c}, which the JAR relies on the "
                            f"engine for: wrong class list?")
        clash = [c for c in foreign if c in engine_classes]
        for pkg, n in sorted(Counter(package(c) for c in clash).items()):
            example = next(c for c in clash if package(c) == pkg)
            failures.append(f"{n} class(es) of {pkg} are also shipped by {engine} (e.g. {example})")

    allowed = ALLOWED[kind]
    used: dict[str, int] = defaultdict(int)
    unrelocated: list[str] = []
    for c in foreign:
        rule = next((r for r in allowed if c.startswith(r[0])), None)
        if rule:
            used[rule[0]] += 1
        else:
            unrelocated.append(c)
    for pkg, n in sorted(Counter(package(c) for c in unrelocated).items()):
        example = next(c for c in unrelocated if package(c) == pkg)
        failures.append(f"{n} unrelocated third-party class(es) in {pkg} (e.g. {example}): "
                        f"relocate under io.riverlet.shaded or allow-list with a reason")
    for prefix, reason in allowed:
        print(f"  allowed unrelocated: {used.get(prefix, 0)} classes under {prefix} ({reason})")

    resources = sorted(n for n in names if not n.endswith("/") and class_name(n) is None
                       and not n.endswith(".class")
                       and not n.startswith(("META-INF/", OURS, "native/")))
    if resources:
        print(f"  other resources outside io/riverlet, native/ and META-INF/: {', '.join(resources)}")
    for f in failures:
        print(f"  FAIL: {f}")
    print(f"  {'ok' if not failures else 'FAILED'}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", required=True, help="the directory packaging/jars.sh wrote")
    ap.add_argument("--version", help="the version every JAR name must carry")
    ap.add_argument("--engine", action="append", default=[], metavar="NAME=SPEC",
                    help="engine class list: a directory of JARs or a class-path file")
    args = ap.parse_args()

    specs = {}
    for e in args.engine:
        name, sep, spec = e.partition("=")
        if not sep or not spec:
            ap.error(f"--engine wants NAME=SPEC, not {e!r}")
        specs[name] = spec
    known = {engine for _, _, engine in JARS if engine}
    for name in specs:
        if name not in known:
            ap.error(f"unknown engine {name!r} (known: {', '.join(sorted(known))})")

    failures = 0
    found = {}
    for f in sorted(os.listdir(args.dist)):
        if not (f.startswith("riverlet-") and f.endswith(".jar")):
            continue
        match = [(i, m) for i, (rx, _, _) in enumerate(JARS) if (m := rx.match(f))]
        if not match:
            print(f"{f}: FAIL: not a JAR packaging/jars.sh makes")
            failures += 1
            continue
        i, m = match[0]
        if args.version and m.group("v") != args.version:
            print(f"{f}: FAIL: version {m.group('v')}, expected {args.version}")
            failures += 1
        if i in found:
            print(f"{f}: FAIL: a second JAR of the same kind as {found[i][0]}")
            failures += 1
            continue
        found[i] = (f, JARS[i][1], JARS[i][2])
    for i, (rx, _, _) in enumerate(JARS):
        if i not in found:
            print(f"FAIL: no JAR matching {rx.pattern} in {args.dist}")
            failures += 1

    cache: dict[str, set[str]] = {}
    for i in sorted(found):
        f, kind, engine = found[i]
        engine_classes = None
        if engine:
            if engine not in specs:
                print(f"{f}: FAIL: no class list for {engine} (--engine {engine}=...)")
                failures += 1
                continue
            if engine not in cache:
                cache[engine], n = load_engine(engine, specs[engine])
                print(f"engine {engine}: {len(cache[engine])} classes in {n} JARs ({specs[engine]})")
            engine_classes = cache[engine]
        failures += len(check(os.path.join(args.dist, f), kind, engine, engine_classes))
    print(f"check_jars: {'FAILED, ' + str(failures) + ' finding(s)' if failures else 'all JARs pass'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
