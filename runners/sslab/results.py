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

import re

from .analysis.tidy import INTEGER_COLUMNS, columns_of, read_rows, table_of

__all__ = ["load", "rows"]


def rows(where: str | Path) -> list[dict]:
    """The table of @where as dicts (sslab.analysis.tidy.read_rows)."""
    return read_rows(where)


#: A setting's value as a number and its unit ("25ms", "0.5BDP", "50mbit").
_NUMBER_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]+)")


def load(where: str | Path):
    """A pandas DataFrame of @where's flows (rows), the numbers as numbers (sslab.analysis.tidy: the
    counts as integers, a setting in one unit also as a number in a column named with it)."""
    import pandas as pd
    where = Path(where)
    if (table := table_of(where)) is not None:
        return typed(pd.read_csv(table))
    found = read_rows(where)
    return typed(pd.DataFrame(found, columns=columns_of(found)))


def typed(df):
    """@df with INTEGER_COLUMNS as integers (pandas' nullable Int64: a missing count stays missing, not
    a float NaN) and, beside each axis_ or param_ column whose every value is a number in one unit, its
    numbers in <column>_<unit> (axis_large_rtt "25ms" -> axis_large_rtt_ms 25.0)."""
    import pandas as pd
    for col in INTEGER_COLUMNS:
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="raise").astype("Int64")
    for col in [c for c in df.columns if c.startswith(("axis_", "param_"))]:
        values = df[col].dropna().astype(str)
        found = [_NUMBER_UNIT.fullmatch(v) for v in values]
        units = {m[2] for m in found if m}
        if len(values) and all(found) and len(units) == 1:
            df[f"{col}_{units.pop().lower()}"] = df[col].map(
                lambda v: float(_NUMBER_UNIT.fullmatch(str(v))[1]) if isinstance(v, str) else float("nan"))
    return df
