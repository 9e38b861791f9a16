"""``questions.html``: every question of a run (or of a compare) in one self-contained page.

For users without an MLflow server, and for compares past the 1,000 rows MLflow's compare
view loads per run. No CDN and no external file: the rows are a JSON island in the page, and
a small inline script sorts (click a header; numbers as numbers) and filters (one text box
over every column, and a column's own box) over *all* rows, not only those on screen.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from locomo_exp.report.run_dir import atomic_write_text
from locomo_exp.results.questions import QuestionRow, verdict_or_score_flips

QUESTIONS_HTML = "questions.html"

_SCRIPT = """
const data = JSON.parse(document.getElementById('rows').textContent);
const cols = data.columns, rows = data.rows;
let sortCol = -1, asc = true;
const tbody = document.querySelector('tbody'), count = document.getElementById('count');
const boxes = Array.from(document.querySelectorAll('thead input'));
function text(v) { return v === null ? '' : String(v); }
function render() {
  const all = document.getElementById('q').value.toLowerCase();
  const per = boxes.map(b => b.value.toLowerCase());
  let shown = rows.filter(r => (!all || r.some(v => text(v).toLowerCase().includes(all)))
    && per.every((p, i) => !p || text(r[i]).toLowerCase().includes(p)));
  if (sortCol >= 0) {
    shown = shown.slice().sort((a, b) => {
      const x = a[sortCol], y = b[sortCol];
      if (x === null) return 1; if (y === null) return -1;
      const c = (typeof x === 'number' && typeof y === 'number') ? x - y
        : text(x).localeCompare(text(y), undefined, {numeric: true});
      return asc ? c : -c;
    });
  }
  tbody.innerHTML = '';
  const frag = document.createDocumentFragment();
  for (const r of shown) {
    const tr = document.createElement('tr');
    for (const v of r) {
      const td = document.createElement('td');
      td.textContent = typeof v === 'number' ? (Number.isInteger(v) ? v : v.toFixed(3)) : text(v);
      if (v === 'gained' || v === 'correct') td.className = 'ok';
      if (v === 'lost' || v === 'wrong') td.className = 'bad';
      tr.appendChild(td);
    }
    frag.appendChild(tr);
  }
  tbody.appendChild(frag);
  count.textContent = shown.length + ' of ' + rows.length + ' rows';
  document.querySelectorAll('thead th span').forEach((s, i) => {
    s.textContent = cols[i] + (i === sortCol ? (asc ? ' \\u25b2' : ' \\u25bc') : '');
  });
}
document.querySelectorAll('thead th span').forEach((s, i) => s.addEventListener('click', () => {
  asc = sortCol === i ? !asc : true; sortCol = i; render();
}));
document.getElementById('q').addEventListener('input', render);
boxes.forEach(b => b.addEventListener('input', render));
const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get('sort')) {
  sortCol = cols.indexOf(hash.get('sort')); asc = hash.get('dir') !== 'desc';
}
if (hash.get('q')) document.getElementById('q').value = hash.get('q');
render();
"""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1em;font-size:13px}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:3px 5px;vertical-align:top;text-align:left}
th{background:#eee;position:sticky;top:0}th span{cursor:pointer;display:block}
th input{width:95%;font-size:11px}td.ok{background:#dfd}td.bad{background:#fdd}
#q{width:30em;margin:0 1em .5em 0}
"""


def render_table_html(title: str, columns: Sequence[str], records: Sequence[Sequence[Any]]) -> str:
    """One self-contained page with a sortable, filterable table of every record.

    The URL fragment sets the starting view: ``#sort=<column>&dir=desc&q=<text>``.

    Args:
        title: the page title.
        columns: the column names.
        records: one sequence of cells per row (strings, numbers or ``None``), in column order.

    Returns:
        The page (UTF-8 text, no external resource).
    """
    payload = json.dumps({"columns": list(columns), "rows": [list(r) for r in records]})
    payload = payload.replace("</", "<\\/")  # the JSON island cannot close its script tag
    heads = "".join(
        f"<th><span>{html.escape(name)}</span><input aria-label='filter {html.escape(name)}'>"
        "</th>"
        for name in columns
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        "<input id='q' placeholder='filter every column'><span id='count'></span>"
        f"<table><thead><tr>{heads}</tr></thead><tbody></tbody></table>"
        f"<script id='rows' type='application/json'>{payload}</script>"
        f"<script>{_SCRIPT}</script></body></html>"
    )


def _word(passed: bool | None) -> str | None:
    return None if passed is None else ("correct" if passed else "wrong")


def run_table(rows: Sequence[QuestionRow]) -> tuple[list[str], list[list[Any]]]:
    """Columns and cells of one run's questions (metrics 0-1, verdict words, the reason).

    Args:
        rows: the run's questions.

    Returns:
        ``(columns, records)``: id, kind, question, gold, prediction, each metric, each
        verdict, the headline verdict's reason, then each tag any row has (e.g.
        ``audit.control``: the page's filter finds an audit control's rows by its kind).
    """
    metric_names = list(dict.fromkeys(name for row in rows for name in row.metrics))
    verdict_names = list(dict.fromkeys(v.name for row in rows for v in row.verdicts))
    tag_names = list(dict.fromkeys(name for row in rows for name in row.tags))
    columns = ["question_id", "kind", "question", "gold", "prediction", *metric_names,
               *verdict_names, "reason", *tag_names]
    records = []
    for row in rows:
        verdicts = {v.name: v for v in row.verdicts}
        head = row.headline
        records.append([
            row.question_id, row.kind, row.question, row.gold, row.prediction,
            *(row.metrics.get(name) for name in metric_names),
            *(_word(verdicts[n].passed) if n in verdicts else None for n in verdict_names),
            head.reason if head is not None else None,
            *(row.tags.get(name) for name in tag_names),
        ])
    return columns, records


def compare_table(
    pairs: Sequence[tuple[QuestionRow, QuestionRow]], labels: tuple[str, str]
) -> tuple[list[str], list[list[Any]]]:
    """Columns and cells of two runs' matched questions side by side, with each flip.

    Args:
        pairs: ``(row in A, row in B)`` of each shared question (the compare's matching).
        labels: short names of runs A and B (column prefixes).

    Returns:
        ``(columns, records)``: one record per pair; ``flip`` is B's direction against A
        (``gained``/``lost``, :func:`~locomo_exp.results.questions.verdict_or_score_flips`:
        the headline verdict, or the headline score for rows without one) or empty.
    """
    flipped = {(a, b): d for a, b, d in verdict_or_score_flips(pairs)}
    metric_names = list(dict.fromkeys(name for row, _ in pairs for name in row.metrics))
    a_label, b_label = labels
    columns = ["question_id", "kind", "question", "gold",
               f"{a_label} prediction", f"{b_label} prediction",
               *(f"{label} {m}" for m in metric_names for label in labels),
               f"{a_label} verdict", f"{b_label} verdict", "flip", f"{b_label} reason"]
    records = []
    for a, b in pairs:
        a_head, b_head = a.headline, b.headline
        records.append([
            a.question_id, a.kind, a.question, a.gold, a.prediction, b.prediction,
            *(run.metrics.get(m) for m in metric_names for run in (a, b)),
            _word(a_head.passed) if a_head is not None else None,
            _word(b_head.passed) if b_head is not None else None,
            flipped.get((a.question_id, b.question_id), ""),
            b_head.reason if b_head is not None else None,
        ])
    return columns, records


def write_questions_html(
    directory: Path, title: str, table: tuple[Sequence[str], Sequence[Sequence[Any]]]
) -> Path:
    """Write ``questions.html`` (atomically) into ``directory``.

    Args:
        directory: the run's or the compare's output directory.
        title: the page title.
        table: ``(columns, records)`` from :func:`run_table` or :func:`compare_table`.

    Returns:
        The file's path.

    Raises:
        OSError: the file cannot be written (no truncated file is left).
    """
    path = directory / QUESTIONS_HTML
    atomic_write_text(path, render_table_html(title, *table))
    return path


def write_run_questions(
    directory: Path, title: str, rows: Sequence[QuestionRow]
) -> tuple[Path, Sequence[QuestionRow]]:
    """Write one run's ``questions.html``; returns its path and the rows (for MLflow's traces).

    Args:
        directory: the run's output directory.
        title: the page title (the input file and the scorer).
        rows: the run's questions.

    Returns:
        ``(path, rows)``.

    Raises:
        OSError: the file cannot be written.
    """
    return write_questions_html(directory, title, run_table(rows)), rows


__all__ = [
    "QUESTIONS_HTML",
    "compare_table",
    "render_table_html",
    "run_table",
    "write_questions_html",
    "write_run_questions",
]
