"""A study's results: a journal of rows as they come, and one Parquet table.

Each finished run is appended to ``runs.jsonl`` at once (one JSON line, flushed): an
interrupted study loses at most the runs in flight, and a restarted one reads the journal
to skip the runs it has (by their key, `spec.Study.runs`). ``results.parquet`` is written
from the journal (every `FLUSH_PERIOD` and at the end; replaced atomically): one row per run
of the study, in run order, with its parameters (a column per dotted path), its figures,
status and error. A column of numbers is float64 (int64 if all whole), of text a string;
lists are written as JSON text.
"""

import json
import math
import os

import pyarrow as pa
import pyarrow.parquet as pq

JOURNAL = 'runs.jsonl'
TABLE = 'results.parquet'
FLUSH_PERIOD = 30.0          # s (wall) between two writes of the table during a study


class ResultTable:
    """The rows of a study's output directory (module doc)."""

    def __init__(self, directory):
        """Open (create) ``directory`` and read the rows its journal holds."""
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        self.journal = os.path.join(self.directory, JOURNAL)
        self.path = os.path.join(self.directory, TABLE)
        self.rows = {}
        if os.path.exists(self.journal):
            with open(self.journal, encoding='utf-8') as stream:
                for line in stream:
                    try:
                        row = json.loads(line)
                    except ValueError:
                        continue        # a line cut by an interruption: that run is redone
                    if isinstance(row, dict) and 'key' in row:
                        self.rows[row['key']] = row
        self._stream = open(self.journal, 'a', encoding='utf-8')

    def add(self, row):
        """Keep ``row`` and append it to the journal."""
        self.rows[row['key']] = row
        self._stream.write(json.dumps(row, default=str) + '\n')
        self._stream.flush()

    def close(self):
        """Close the journal."""
        self._stream.close()

    def write(self, keys):
        """Write the table of the rows of ``keys`` (in that order) that are done."""
        rows = [self.rows[k] for k in keys if k in self.rows]
        names = []
        for row in rows:
            names += [n for n in row if n not in names]
        columns = {name: _column([row.get(name) for row in rows]) for name in names}
        table = pa.table(columns) if columns else pa.table({'run': pa.array([], pa.int64())})
        temporary = self.path + '.tmp'
        pq.write_table(table, temporary)
        os.replace(temporary, self.path)
        return table


def _column(values):
    """One column as an Arrow array of the narrowest type that holds every value."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, pa.int64())
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if all(isinstance(v, str) for v in present):
        return pa.array(values, pa.string())
    return pa.array([None if v is None else json.dumps(v, default=str) for v in values],
                    pa.string())


def read_table(directory):
    """Return a study's results table as a list of rows ({column: value})."""
    table = pq.read_table(os.path.join(str(directory), TABLE))
    rows = table.to_pylist()
    for row in rows:            # NaN stays NaN (Parquet keeps it); None is a missing value
        for name, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                row[name] = math.nan
    return rows
