"""A read-only code view whose syntax highlighting is prepared off the UI thread.

Textual's ``TextArea.code_editor(text, language=...)`` does everything on the
UI thread, and twice (its ``__init__`` builds the document, then setting
``language`` builds it again): it parses the text with tree-sitter through a
Python callback, compiles the language's highlight query (~25 ms for Python,
every time), runs it over the whole file and wraps every line. For an answer's
11 KB main file that was ~70 ms of the ~450 ms an open cost; for a 1 MB file,
seconds with the screen frozen.

Here :func:`prepare_code` does all of that in a worker thread (tree-sitter
parses bytes and runs queries without holding the GIL; the compiled query is
kept per language), and :class:`CodeView` shows the result at once: the same
document, the same highlight map, the same wrapping, so it looks exactly like
the ``TextArea.code_editor`` it replaces. The parts of TextArea it fills in
are private (Textual 8's ``_set_document``); if they move, ``CodeView.show``
falls back to TextArea's own ``load_text`` (correct, only slower).
"""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

from textual.document._document import Document
from textual.document._wrapped_document import WrappedDocument
from textual.widgets import TextArea

TAB_WIDTH = 4  # TextArea's default indent_width: what the prepared wrapping assumes

_queries: dict[str, object] = {}  # language -> compiled tree-sitter highlight query
_queries_lock = threading.Lock()


def highlight_query(language: str):
    """The compiled tree-sitter highlight query of one of Textual's built-in
    languages (compiled once: ~25 ms for Python); None without tree-sitter or
    for a language Textual does not know."""
    with _queries_lock:
        if language in _queries:
            return _queries[language]
    query = None
    try:
        from textual._tree_sitter import get_language
        from tree_sitter import Query

        lang = get_language(language)
        source = TextArea._get_builtin_highlight_query(language) if lang is not None else ""
        if lang is not None and source:
            query = Query(lang, source)
    except Exception:  # no tree-sitter, no such language, a query this tree-sitter refuses
        query = None
    with _queries_lock:
        _queries.setdefault(language, query)
        return _queries[language]


PARSE_CHUNK_BYTES = 16 * 1024  # ~3 ms of tree-sitter's parsing between two reads


def _parsed_document(text: str, language: str):
    """Textual's SyntaxAwareDocument for ``text``: the same tree its constructor
    builds through a Python read callback (each line with the document's newline
    after it), read PARSE_CHUNK_BYTES at a time instead of a line at a time (about
    half the cost). tree-sitter holds the GIL while it parses (a 1 MB file: ~0.2 s
    of a frozen screen in one piece); between chunks the read callback runs
    Python, where the UI thread can take the GIL back."""
    from textual._tree_sitter import get_language
    from textual.document._syntax_aware_document import SyntaxAwareDocument
    from tree_sitter import Parser

    class ParsedDocument(SyntaxAwareDocument):
        def __init__(self) -> None:  # noqa: D401 - what SyntaxAwareDocument.__init__ does, from bytes
            Document.__init__(self, text)
            self.language = get_language(language)
            self._parser = Parser(self.language)
            newline = self.newline
            source = "".join(line + newline for line in self.lines).encode("utf-8")
            chunked = self._parser.parse(lambda offset, _point: source[offset:offset + PARSE_CHUNK_BYTES])
            self._syntax_tree = self._parser.parse(source, old_tree=chunked)

    return ParsedDocument()


class CountedWrappedDocument(WrappedDocument):
    """WrappedDocument whose height is counted once per wrapping, not summed over
    every line of the file each time TextArea draws a line (~30 rows a frame:
    O(file) each, a tenth of a second a frame at 1 MB)."""

    _height: int | None = None

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        self._height = None
        super().wrap(width, tab_width)

    def wrap_range(self, *args, **kwargs):
        self._height = None
        return super().wrap_range(*args, **kwargs)

    @property
    def height(self) -> int:
        if self._height is None:
            self._height = super().height
        return self._height


@dataclass
class PreparedCode:
    """What a :class:`CodeView` needs to show ``text``, built off the UI thread."""

    text: str
    language: str | None  # None: plain text (no tree-sitter language for it, or not highlighted yet)
    document: object
    wrapped: WrappedDocument
    query: object = None
    highlights: dict = field(default_factory=lambda: defaultdict(list))
    highlighted_rows: int | None = None  # only the first rows are highlighted yet (see complete_highlights)


def prepare_code(text: str, language: str | None, first_rows: int | None = None) -> PreparedCode:
    """Parse, highlight and wrap ``text`` as TextArea would (safe in any thread).
    ``language=None``, or one without a highlight query: plain text. ``first_rows``:
    highlight only the rows a first frame shows (a query over 60 rows of an 11 KB
    file takes a quarter of the time of the whole): complete_highlights does the rest."""
    query = highlight_query(language) if language else None
    if query is None:
        document = Document(text)
        return PreparedCode(text, None, document, CountedWrappedDocument(document, tab_width=TAB_WIDTH))
    document = _parsed_document(text, language)
    rows = first_rows if first_rows and document.line_count > first_rows else None
    highlights = highlight_map(document, query, rows)
    return PreparedCode(text, language, document, CountedWrappedDocument(document, tab_width=TAB_WIDTH), query,
                        highlights, rows)


CHUNK_ROWS = 128  # rows per tree-sitter query: it holds the GIL while it runs (~5 ms for 128 rows)


def complete_highlights(prepared: PreparedCode) -> dict:
    """The whole highlight map of a PreparedCode made with ``first_rows`` (in a worker)."""
    return highlight_map(prepared.document, prepared.query)


def highlight_map(document, query, rows: int | None = None) -> dict:
    """TextArea._build_highlight_map, on this thread (``rows``: the first rows only).
    Queried CHUNK_ROWS rows at a time, each row from the query over its own chunk
    (a row gets from a query over any range that holds it the same highlights as
    from one over the whole file): tree-sitter holds the GIL while it runs a
    query, and over a whole 1 MB file that froze the screen for a second."""
    end = document.line_count if rows is None else min(rows, document.line_count)
    highlights: dict = defaultdict(list)
    order: dict[str, int] = {}  # capture names by first use in the file, as one query over it orders them
    for first in range(0, end, CHUNK_ROWS):
        last = min(first + CHUNK_ROWS, end)
        chunk: dict = defaultdict(list)
        captures = document.query_syntax_tree(query, (first, 0), (last, 0))
        for name in captures:
            order.setdefault(name, len(order))
        for name, nodes in sorted(captures.items(), key=lambda item: order[item[0]]):
            for node in nodes:
                start_row, start_column = node.start_point
                end_row, end_column = node.end_point
                if start_row == end_row:
                    chunk[start_row].append((start_column, end_column, name))
                else:
                    chunk[start_row].append((start_column, None, name))
                    for row in range(max(start_row + 1, first), min(end_row, last)):
                        chunk[row].append((0, None, name))
                    chunk[end_row].append((0, end_column, name))
        for row in range(first, last):
            if row in chunk:
                highlights[row] = chunk[row]
    return highlights


class CodeView(TextArea):
    """``TextArea.code_editor(..., read_only=True)`` that shows a :class:`PreparedCode`."""

    def __init__(self, prepared: PreparedCode | None = None, **kwargs) -> None:
        kwargs.setdefault("theme", "monokai")
        kwargs.setdefault("soft_wrap", False)
        kwargs.setdefault("tab_behavior", "indent")
        kwargs.setdefault("show_line_numbers", True)
        kwargs.setdefault("read_only", True)
        super().__init__("", language=None, **kwargs)  # an empty document: nothing to parse or wrap here
        self._wrapped_for: tuple | None = None  # (document, indent) the wrapping was made for (width 0)
        self.highlighted_rows: int | None = None  # only these first rows are highlighted yet
        if prepared is not None:
            self.show(prepared)

    @property
    def text(self) -> str:
        """The document's text, joined once per document: TextArea reads it to draw
        each line (to know whether to show its placeholder), O(file) each time."""
        document = self.document
        if getattr(self, "_text_of", (None, ""))[0] is not document:
            self._text_of = (document, document.text)
        return self._text_of[1]

    @text.setter
    def text(self, value: str) -> None:
        self.load_text(value)

    def show(self, prepared: PreparedCode, keep_place: bool = False) -> None:
        """Show ``prepared`` (its highlighting, if any, already done). ``keep_place``:
        the same text again (now highlighted): keep the cursor and the scroll."""
        place = (self.selection, self.scroll_offset) if keep_place else None
        try:
            self.set_reactive(TextArea.language, prepared.language)  # no watcher: it would parse again
            self._highlight_query = prepared.query
            self.document = prepared.document
            self.wrapped_document = prepared.wrapped
            from textual.document._document_navigator import DocumentNavigator

            self.navigator = DocumentNavigator(self.wrapped_document)
            self._highlights = prepared.highlights
            self.highlighted_rows = prepared.highlighted_rows
            self._wrapped_for = (prepared.document, TAB_WIDTH)
            self._line_cache.clear()
        except Exception:  # Textual's internals moved: let TextArea do it (same result, on this thread)
            self.set_reactive(TextArea.language, None)
            self.load_text(prepared.text)
            if prepared.language:
                self.language = prepared.language
            return
        if place is None:
            self.move_cursor((0, 0))
        self._rewrap_and_refresh_virtual_size()
        if place is not None:
            selection, (x, y) = place
            self.selection = selection
            self.scroll_to(x, y, animate=False, immediate=True)

    def complete(self, prepared: PreparedCode, highlights: dict) -> None:
        """The whole highlight map of ``prepared`` (shown with its first rows highlighted).
        The rows drawn so far had the same highlights: no redraw, unless the view
        was scrolled past them meanwhile."""
        prepared.highlights, prepared.highlighted_rows = highlights, None
        if self.document is not prepared.document:
            return  # another file since
        rows, self.highlighted_rows = self.highlighted_rows, None
        self._highlights = highlights
        if rows is None or self.scroll_offset.y + self.size.height > rows:
            self._line_cache.clear()
            self.refresh()

    def _rewrap_and_refresh_virtual_size(self) -> None:
        # Without soft wrap the wrapping does not depend on the width (it is width 0):
        # a read-only document wrapped once (in prepare_code) stays wrapped; TextArea
        # would rewrap every line on each resize, ~0.2 s for a 1 MB file.
        if self.wrap_width == 0 and getattr(self, "_wrapped_for", None) == (self.document, self.indent_width):
            self._line_cache.clear()
            self._refresh_size()
            return
        super()._rewrap_and_refresh_virtual_size()
        if self.wrap_width == 0:
            self._wrapped_for = (self.document, self.indent_width)
