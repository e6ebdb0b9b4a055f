"""What the JVM, Spark and Flink benchmark scripts under benches/ share: a release `riverlet
serve` on a free port, and writing their marked section of benches/RESULTS.md."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


class RiverletServe:
    """`riverlet serve --fsync never` on `data_dir`; `bootstrap` is its address."""

    label = "riverlet serve (release, --fsync never)"

    def __init__(self, data_dir: Path, remove_data_on_stop: bool = False,
                 exe: Path | None = None):
        exe = exe or target_dir() / "release" / "riverlet"
        self.data_dir = data_dir
        self.remove_data_on_stop = remove_data_on_stop
        self.proc = subprocess.Popen(
            [str(exe), "serve", "--data-dir", str(data_dir), "--port", "0", "--fsync", "never"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + 60
        self.bootstrap = None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("bootstrap:"):
                self.bootstrap = line.split(":", 1)[1].strip()
                break
        if not self.bootstrap:
            self.proc.kill()
            sys.exit("riverlet serve did not print its bootstrap address")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            # Seen once on the loaded machine (SIGTERM with ~1 GB of fresh tables): the figures
            # are measured already, so the caller still writes its report.
            print("riverlet serve did not exit within 120 s of SIGTERM; killing it",
                  file=sys.stderr, flush=True)
            self.proc.kill()
            self.proc.wait()
        if self.remove_data_on_stop:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def replace_section(out: Path, start: str, end: str, section: str) -> None:
    """Puts `section` (which begins with `start` and ends with `end`) in place of the marked
    section of `out`, or appends it when `out` has none yet."""
    text = out.read_text() if out.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    out.write_text(text)
