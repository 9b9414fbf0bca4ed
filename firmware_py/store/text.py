"""Text from records made safe for where it goes: a terminal line or a spreadsheet cell.

Names come from records, backups and the web page's name editor, so they may hold
anything Unicode allows: control characters, escape sequences, text a spreadsheet
would run as a formula. These two functions are the only places that decide how
such text is shown; every output that prints or exports a name goes through one.
"""
from __future__ import annotations

#: first characters that make a spreadsheet (LibreOffice, Excel, Google Sheets) read a
#: cell as a formula, or that some of them strip before doing so
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def shown(text) -> str:
    """``text`` (any value, turned into ``str``) safe for a terminal line: every character
    that is not printable (C0/C1 controls such as ESC and BEL, line breaks, Unicode format
    characters such as a right-to-left override) is written as its Python escape
    (``"\\x1b"``, ``"\\u202e"``), so no escape sequence reaches the terminal raw."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def spreadsheet_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a cell starting with one of
    :data:`FORMULA_STARTS` gets a leading ``'`` (the spreadsheets' own "this is text"
    mark), so a hostile name such as ``=HYPERLINK(...)`` is never run as a formula."""
    return "'" + text if text[:1] in FORMULA_STARTS else text


def csv_text(text: str) -> str:
    """A text cell of a CSV export (the history's, the club's results): :func:`shown`, then
    :func:`spreadsheet_cell`, so neither an escape sequence nor a formula survives."""
    return spreadsheet_cell(shown(text))
