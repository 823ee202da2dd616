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

from .analysis.tidy import columns_of, read_rows, table_of

__all__ = ["load", "rows"]


def rows(where: str | Path) -> list[dict]:
    """The table of @where as dicts (sslab.analysis.tidy.read_rows)."""
    return read_rows(where)


def load(where: str | Path):
    """A pandas DataFrame of @where's flows (rows), the numbers as numbers."""
    import pandas as pd
    where = Path(where)
    if (table := table_of(where)) is not None:
        return pd.read_csv(table)
    found = read_rows(where)
    return pd.DataFrame(found, columns=columns_of(found))
