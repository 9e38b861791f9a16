"""Reading a results file safely: one read, one hash, one clear line for every bad input.

:func:`read_results_file` is the only place that touches a results file's bytes. It
checks the path is a regular file *before* opening it (a FIFO would block, a directory
or a symlink loop would raise), reads the bytes once, hashes exactly those bytes,
decodes them by their byte-order mark (UTF-8, UTF-16 or UTF-32; UTF-8 without one), and
parses JSON or JSON Lines. Every failure becomes a :class:`DataValidationError` naming the
file (and, where it helps, the byte offset or line), which the CLI prints as one message
without a traceback.

The error types live here (and are re-exported by :mod:`locomo_exp.data`) so that this
module does not import the record parser.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import json
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_BOMS: tuple[tuple[bytes, str, str], ...] = (
    # UTF-32 first: its little-endian mark begins with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8 (with a byte-order mark)"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
)
"""(byte-order mark, codec without the mark, display name), in the order they are tried."""

_NO_BOM_NAMES = {
    "utf-8": "UTF-8",
    "utf-16-le": "UTF-16 LE (no byte-order mark)",
    "utf-16-be": "UTF-16 BE (no byte-order mark)",
    "utf-32-le": "UTF-32 LE (no byte-order mark)",
    "utf-32-be": "UTF-32 BE (no byte-order mark)",
}


@dataclass(frozen=True)
class RecordProblem:
    """One problem found in a results file.

    Attributes:
        path: the file.
        where: the record's location, e.g. ``[12]`` or ``["3"][7]`` (JSON) or ``line 5``
            (JSON Lines, 1-based);
            empty for a problem with the whole file.
        field: the field name in the file, or ``None`` for the whole record/file.
        message: what is wrong.
        position: 0-based reading-order index of the record, or ``None``.
    """

    path: str
    where: str
    field: str | None
    message: str
    position: int | None = None

    def __str__(self) -> str:
        """``path: record N, field F: message`` (the parts that are known)."""
        parts = [self.path]
        if self.where:  # a JSON Lines row is named by its line, as editors show it
            parts.append(self.where if self.where.startswith("line ") else f"record {self.where}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + f": {self.message}"


class DataValidationError(ValueError):
    """A results file cannot be scored as it is; ``problems`` lists every problem found.

    A ``ValueError``, so the CLI prints it as one message (no traceback) and exits 1. One
    problem is one line (``FILE: record [3]: field 'category': ...``, then the advice, if
    any, on the same line); several are a count line, then one line each (a message shared
    by many records is one line), then the advice.
    """

    def __init__(self, problems: list[RecordProblem], hint: str = ""):
        self.problems = problems
        lines = _grouped_lines(problems)
        if not hint and any(p.position is not None for p in problems):
            hint = "Fix the file, or set data.on_invalid=skip to score the valid records."
        # each line names its file: the answers, data.reference or data.categories_from
        if len(problems) == 1:
            super().__init__(f"{lines[0].rstrip('.')}. {hint}" if hint else lines[0])
            return
        shown = "\n".join(f"  - {line}" for line in lines[:50])
        more = f"\n  ... and {len(lines) - 50} more" if len(lines) > 50 else ""
        if hint:
            more += f"\n{hint}"
        super().__init__(f"{len(problems)} problems in the input:\n{shown}{more}")


def _grouped_lines(problems: list[RecordProblem], at_least: int = 5) -> list[str]:
    """One line per problem, except that a (field, message) shared by many records is one line."""
    groups: dict[tuple[str | None, str], list[RecordProblem]] = {}
    for problem in problems:
        groups.setdefault((problem.field, problem.message), []).append(problem)
    lines: list[str] = []
    for problem in problems:
        group = groups[(problem.field, problem.message)]
        if len(group) < at_least:
            lines.append(str(problem))
        elif group[0] is problem:
            examples = ", ".join(p.where for p in group[:3])
            field_text = f": field '{problem.field}'" if problem.field else ""
            lines.append(
                f"{problem.path}: {len(group)} records ({examples}, ...){field_text}: "
                f"{problem.message}"
            )
    return lines


def file_error(path: Path | str, message: str) -> DataValidationError:
    """A :class:`DataValidationError` about a whole file (no record, no field)."""
    return DataValidationError([RecordProblem(str(path), "", None, message)])


def absolute_path(path: str | Path) -> Path:
    """``path`` made absolute with symlinks resolved, or just absolute when they cannot be.

    ``Path.resolve`` raises ``RuntimeError`` on a symlink loop (Python < 3.13); the loop is
    then reported by :func:`check_regular_file` instead of as a traceback.
    """
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(Path(path).expanduser()))


def check_regular_file(path: Path, what: str = "results file") -> None:
    """Check that ``path`` is an existing regular file, without opening it.

    Args:
        path: the file (symlinks are followed).
        what: what the file should be, for a directory's line (``"reference file"``:
            ``... is a directory, not a reference file``).

    Raises:
        DataValidationError: one line naming the file, for a missing file, a symlink loop,
            a directory, a FIFO (named pipe: opening it could block forever), a socket or
            device, or a file that cannot be inspected.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise file_error(path, "file not found") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise file_error(path, "symlink loop (too many levels of symbolic links)") from None
        raise file_error(path, f"cannot read the file ({error.strerror or error})") from None
    if stat.S_ISDIR(mode):
        article = "an" if what[:1] in tuple("aeiou") else "a"
        raise file_error(path, f"is a directory, not {article} {what}")
    if stat.S_ISFIFO(mode):
        raise file_error(
            path, "is a FIFO (named pipe), not a regular file: write its content to a file"
        )
    if not stat.S_ISREG(mode):
        raise file_error(path, "is not a regular file (a socket or a device)")


def read_bytes_once(path: Path, what: str = "results file") -> bytes:
    """Read a regular file's bytes with one ``read`` of one open file.

    The file is opened non-blocking and checked again on the open descriptor, so a file
    swapped for a FIFO after :func:`check_regular_file` cannot block the read.

    Args:
        path: the file.
        what: what the file should be (see :func:`check_regular_file`).

    Returns:
        Its bytes.

    Raises:
        DataValidationError: if it is not a regular file or cannot be read.
    """
    check_regular_file(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise file_error(path, f"cannot open the file ({error.strerror or error})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise file_error(path, "is not a regular file")
        try:
            return handle.read()
        except OSError as error:
            raise file_error(path, f"cannot read the file ({error.strerror or error})") from None


def decode_text(data: bytes, path: Path | str) -> str:
    """Decode a results file's bytes to text.

    A byte-order mark selects UTF-8, UTF-16 (LE/BE) or UTF-32 (LE/BE) and is dropped.
    Without one, JSON's own rule (RFC 8259 §8.1; ``json.detect_encoding``) tells UTF-8
    from BOM-less UTF-16/32 by the zero bytes of the first characters.

    Args:
        data: the file's bytes.
        path: the file, for messages.

    Returns:
        The text, without the byte-order mark.

    Raises:
        DataValidationError: naming the file, the encoding and the byte offset (0-based,
            counted from the start of the file) of the first byte that cannot be decoded.
    """
    found = next((entry for entry in _BOMS if data.startswith(entry[0])), None)
    if found is not None:
        bom, codec, name = found
        body, skipped = data[len(bom) :], len(bom)
    else:
        codec = json.detect_encoding(data)
        codec = codec if codec in _NO_BOM_NAMES else "utf-8"
        name, body, skipped = _NO_BOM_NAMES[codec], data, 0
    try:
        return body.decode(codec)
    except UnicodeDecodeError as error:
        offset = skipped + error.start
        shown = data[offset : offset + 1].hex() or "end of file"
        raise file_error(
            path,
            f"not valid {name} text: cannot decode the byte at offset {offset} "
            f"(0x{shown}: {error.reason}); save the file as UTF-8",
        ) from None


def _parse_one(text: str) -> Any:
    """``json.loads`` with hostile-input errors turned into plain messages (``ValueError``)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise _HostileJSON(
            "JSON nested too deep to read (thousands of nested lists or objects)"
        ) from None
    except ValueError as error:  # Python's int/str conversion limit (3.11+), e.g. 5,000 digits
        if "digits" in str(error):
            raise _HostileJSON(
                "contains an integer with more digits than Python reads "
                f"({_int_digit_limit()}); no results-file value is that long"
            ) from None
        raise _HostileJSON(f"cannot read a JSON value ({error})") from None


class _HostileJSON(ValueError):
    """Valid-looking JSON that cannot be read safely (too deep, too many digits)."""


def _int_digit_limit() -> str:
    import sys

    getter = getattr(sys, "get_int_max_str_digits", None)
    return f"the limit is {getter()} digits" if getter is not None else "too many digits"


def parse_json_or_jsonl(text: str, path: Path | str) -> Any:
    """Parse text as JSON, or else as JSON Lines.

    Python's ``json`` accepts ``NaN``, ``Infinity`` and ``-Infinity`` tokens; they come
    back as floats (a missing prediction, see :mod:`locomo_exp.data`).

    Args:
        text: the decoded file.
        path: the file, for messages.

    Returns:
        The parsed JSON value (a list for JSON Lines).

    Raises:
        DataValidationError: for an empty file, text that is neither JSON nor JSON Lines,
            JSON nested too deep, or an integer with too many digits -- one line naming the
            file (and the JSON Lines line number).
    """
    return parse_with_lines(text, path)[0]


def parse_with_lines(text: str, path: Path | str) -> tuple[Any, tuple[int, ...] | None]:
    """Parse text as JSON, or else as JSON Lines, with the line of each JSON Lines row.

    Args:
        text: the decoded file.
        path: the file, for messages.

    Returns:
        ``(value, lines)``: the parsed value (a list for JSON Lines) and, for JSON Lines,
        the 1-based line number of each row as an editor shows it (blank lines are
        skipped, so row ``i`` need not be on line ``i + 1``); ``None`` for JSON.

    Raises:
        DataValidationError: as :func:`parse_json_or_jsonl`.
    """
    if not text.strip():
        raise file_error(path, "file is empty")
    try:
        return _parse_one(text), None
    except _HostileJSON as error:
        raise file_error(path, str(error)) from None
    except json.JSONDecodeError as json_error:
        rows: list[Any] = []
        lines: list[int] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(_parse_one(line))
                lines.append(number)
            except _HostileJSON as error:
                raise file_error(path, f"line {number}: {error}") from None
            except json.JSONDecodeError:
                raise file_error(
                    path,
                    f"not valid JSON ({json_error.msg} at line {json_error.lineno}, "
                    f"column {json_error.colno}) nor JSON Lines (line {number})",
                ) from None
        return rows, tuple(lines)


_LIST_INDEX = re.compile(r"\[(\d+)\]\.?(.*)", re.S)
"""A record location that starts with its index in the file's top-level list."""


@dataclass(frozen=True)
class ParsedFile:
    """A results file read once.

    Attributes:
        path: the absolute path.
        obj: the parsed JSON (a list for JSON Lines).
        sha256: hex digest of exactly the bytes that were parsed.
        n_bytes: their number.
        lines: for JSON Lines, the 1-based line number of each row; ``None`` for JSON.
    """

    path: Path
    obj: Any
    sha256: str
    n_bytes: int
    lines: tuple[int, ...] | None = None

    def where(self, index: int) -> str:
        """Where row ``index`` (0-based) of the parsed list is, for messages.

        Returns:
            ``line 7`` for JSON Lines (the line an editor shows), ``[6]`` for a JSON list.
        """
        if self.lines is not None and 0 <= index < len(self.lines):
            return f"line {self.lines[index]}"
        return f"[{index}]"

    def relabel(self, where: str) -> str:
        """A reader's record location with a JSON Lines row named by its line.

        Args:
            where: a location that starts with the row's index in the top-level list
                (``[6]``, ``[6].qa[2] (sample_id=x)``); other locations are kept.

        Returns:
            For JSON Lines ``line 7``, ``line 7, qa[2] (sample_id=x)``; else ``where``.
        """
        found = _LIST_INDEX.fullmatch(where) if self.lines is not None else None
        if found is None or int(found.group(1)) >= len(self.lines or ()):
            return where
        rest = found.group(2).strip()
        line = self.where(int(found.group(1)))
        return f"{line}, {rest}" if rest else line


def read_results_file(path: str | Path, what: str = "results file") -> ParsedFile:
    """Read, hash, decode and parse a results file; the file is opened and read once.

    Args:
        path: the file (absolute, or relative to the current directory).
        what: what the file should be (``"reference file"`` for ``data.reference``), for
            the line of a directory given instead (see :func:`check_regular_file`).

    Returns:
        :class:`ParsedFile`.

    Raises:
        DataValidationError: one line naming the file for every way it can be unreadable
            (see :func:`check_regular_file`, :func:`decode_text`, :func:`parse_json_or_jsonl`).
    """
    absolute = absolute_path(path)
    data = read_bytes_once(absolute, what)
    digest = hashlib.sha256(data).hexdigest()
    obj, lines = parse_with_lines(decode_text(data, absolute), absolute)
    return ParsedFile(path=absolute, obj=obj, sha256=digest, n_bytes=len(data), lines=lines)


__all__ = [
    "DataValidationError",
    "ParsedFile",
    "RecordProblem",
    "absolute_path",
    "check_regular_file",
    "decode_text",
    "file_error",
    "parse_json_or_jsonl",
    "parse_with_lines",
    "read_bytes_once",
    "read_results_file",
]


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
