"""Results as a pandas DataFrame, for a researcher's own analysis:

    >>> from sslab import results
    >>> df = results.load("results/table1/all")          # a matrix: its latest report
    >>> df.groupby(["rtt_ms", "cc"]).fct_s.median()

load() takes a report's directory (it reads the report's flows.csv), a matrix's or an experiment's
results directory (its reports/latest), or a run's (every flow of its runs, read from its archive):
a row per flow per run, the setting as columns (sslab.analysis.tidy says what each one is).
"""

from __future__ import annotations

from pathlib import Path

from .analysis.tidy import FILE, columns_of, flow_rows

__all__ = ["load", "rows"]


def _table_of(where: Path) -> Path | None:
    """The flows.csv that stands for @where: its own, its latest report's, or None (a run directory)."""
    for candidate in (where / FILE, where / "reports" / "latest" / FILE, where / "latest" / FILE):
        if candidate.is_file():
            return candidate
    return None


def rows(where: str | Path) -> list[dict]:
    """The table of @where as dicts (values as the CSV holds them, strings; or, read from a run's
    archive, as recorded)."""
    import csv
    where = Path(where)
    if (table := _table_of(where)) is not None:
        with open(table, newline="") as f:
            return list(csv.DictReader(f))
    if (where / "job" / "out" / "runs.json").is_file():
        return flow_rows(where)
    raise FileNotFoundError(f"{where}: no {FILE} there (a report's), under reports/latest/ (a matrix's or "
                            f"experiment's results) or a run's archive (job/out/runs.json)")


def load(where: str | Path):
    """A pandas DataFrame of @where's flows (rows), the numbers as numbers."""
    import pandas as pd
    where = Path(where)
    if (table := _table_of(where)) is not None:
        return pd.read_csv(table)
    found = rows(where)
    return pd.DataFrame(found, columns=columns_of(found))
