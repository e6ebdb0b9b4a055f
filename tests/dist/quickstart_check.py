"""Checks an installed riverlet wheel the way a user meets it (run by tests/dist/wheel.sh in a
fresh virtualenv that has only the wheel and its readers, no Rust toolchain):

1. riverlet is imported from the virtualenv's site-packages, not from the repository;
2. every ```python block of the README's "## Python quickstart" section, taken from README.md
   as it is now (so a README edit that breaks the quickstart fails here), runs in its own
   interpreter with warnings as errors and prints the rows it reads;
3. a result read through the wheel is read by pandas, polars and DuckDB (DuckDB over the
   pyarrow table), each giving the rows the test wrote.

    python quickstart_check.py README.md
Prints one line per check and exits non-zero on the first failure.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path


def quickstart_blocks(readme: Path) -> list[str]:
    text = readme.read_text()
    start = text.index("## Python quickstart")
    end = text.find("\n## ", start + 1)
    section = text[start:] if end < 0 else text[start:end]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    if not blocks:
        raise SystemExit(f"no ```python block in the Python quickstart section of {readme}")
    return blocks


def check_installed_from_site_packages() -> None:
    import riverlet

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    where = Path(riverlet.__file__).resolve()
    if site not in where.parents:
        raise SystemExit(f"riverlet imported from {where}, not from {site}")
    print(f"ok: riverlet imported from {where.parent}")


def check_quickstart(readme: Path) -> None:
    blocks = quickstart_blocks(readme)
    with tempfile.TemporaryDirectory(prefix="riverlet-quickstart-") as tmp:
        for i, block in enumerate(blocks):
            script = Path(tmp) / f"quickstart_{i}.py"
            script.write_text(block)
            r = subprocess.run(
                [sys.executable, "-W", "error", str(script)],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=tmp,
            )
            if r.returncode != 0 or r.stderr:
                raise SystemExit(
                    f"README quickstart block {i} failed (exit {r.returncode}):\n"
                    f"--- block ---\n{block}--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}"
                )
            # Each block prints what it read: a pyarrow table (its column names) or record
            # batches as Python lists of rows (their keys).
            if "order_id" not in r.stdout:
                raise SystemExit(f"README quickstart block {i} printed no rows:\n{r.stdout}")
            print(f"ok: README quickstart block {i} ({len(block.splitlines())} lines) ran")


def check_readers() -> None:
    import duckdb
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    import riverlet

    ids = list(range(1, 101))
    amounts = [(i * 7) % 50 for i in ids]
    wanted = sorted((i, a) for i, a in zip(ids, amounts) if a >= 20)
    with riverlet.LocalServer() as server:
        conn = riverlet.connect(server.bootstrap_servers)
        conn.create_database("dist", if_not_exists=True)
        schema = pa.schema([("id", pa.int64()), ("amount", pa.int32())])
        conn.create_table("dist.t", schema, buckets=3)
        t = conn.table("dist.t")
        t.append(pa.table({"id": ids, "amount": amounts}, schema=schema))
        result = t.read(filter=[("amount", ">=", 20)])
        conn.close()
    if not isinstance(result, pa.Table):
        raise SystemExit(f"read() returned {type(result).__name__}, not a pyarrow.Table")

    df = result.to_pandas()
    if not isinstance(df, pd.DataFrame):
        raise SystemExit(f"to_pandas() gave {type(df).__name__}")
    got = sorted(zip(df["id"].tolist(), df["amount"].tolist()))
    if got != wanted:
        raise SystemExit(f"pandas read {len(got)} rows, wanted {len(wanted)}: {got[:5]}...")
    print(f"ok: pandas {pd.__version__} read {len(got)} rows")

    pl_df = pl.from_arrow(result)
    if not isinstance(pl_df, pl.DataFrame):
        raise SystemExit(f"polars.from_arrow gave {type(pl_df).__name__}")
    got = sorted(pl_df.select(["id", "amount"]).rows())
    if got != wanted:
        raise SystemExit(f"polars read {len(got)} rows, wanted {len(wanted)}: {got[:5]}...")
    print(f"ok: polars {pl.__version__} read {len(got)} rows")

    con = duckdb.connect()
    con.register("result", result)
    got = con.execute("SELECT id, amount FROM result ORDER BY id").fetchall()
    row = con.execute("SELECT count(*), sum(amount) FROM result").fetchone()
    n, total = row if row is not None else (0, 0)
    if sorted(got) != wanted or (n, total) != (len(wanted), sum(a for _, a in wanted)):
        raise SystemExit(f"DuckDB read {n} rows summing to {total}, wanted {len(wanted)}")
    print(f"ok: DuckDB {duckdb.__version__} read {n} rows over the pyarrow table")


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: quickstart_check.py README.md")
    readme = Path(sys.argv[1])
    check_installed_from_site_packages()
    check_quickstart(readme)
    check_readers()


if __name__ == "__main__":
    main()
