"""``--export FILE.md``: the run(s) as GitHub-flavoured Markdown, for pull requests and issues.

A header table, the transcript, each tool call in a ``<details>`` block with the same
per-tool sections as the TUI's detail (:func:`cursor_watch.core.tools.detail_sections`), a
tool-call table and the diagnostics. Several runs: one document with a table of contents.

Escaping (everything from the stream is untrusted; each string's secrets are redacted first,
unless ``--no-redact``: :func:`cursor_watch.views.export.common.doc_text`):

* every payload (tool output, file contents, diffs, JSON, the prompt, thinking) is a fenced
  code block whose fence is longer than any backtick run inside it, so a payload holding
  ```` ``` ```` never ends its block;
* short values are code spans delimited the same way; other text has every ASCII
  punctuation character backslash-escaped; text inside the ``<summary>`` line (raw HTML)
  is HTML-escaped; control characters are shown (:func:`cursor_watch.safe.visible_doc`);
* the agent's own Markdown is kept as Markdown when it holds no raw HTML, no link or image
  to a scheme other than ``http``, ``https`` or ``mailto``, and no unclosed code fence (any
  of which could break the document or carry a script to a renderer less careful than
  GitHub); otherwise that segment is shown as its source, in a code block. Checking parses
  the message, within the HTML export's budgets (:class:`cursor_watch.views.export.html.Renderer`):
  a longer message, or one past the budget, is shown as its source too.

``max_chars`` (``--export-max-chars``; GitHub's comment limit is 65,536) keeps the document
under that many characters: payloads are cut first (each to the same, largest size that
fits, with a note in the block saying how much was left out); if the document still does
not fit, it ends at a block boundary with a note saying how much was left out.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ... import __version__
from ...fmt import model_label, plural, shown_detail
from ...core.canonical import agent_command
from ...core.model import ToolCall
from ...stream.payloads import call_detail
from ...fmt import call_duration_text, format_ms
from ..labels import STATUS_STYLE
from ..summary import dumps_json
from ...core.runs import Run
from ...core.tools import AGENT_MARKDOWN, Section, cut_payload, lexer_for
from .common import (EXPORT_PAYLOAD_CHARS, call_facts, doc_text, export_redactor, final_text, redacted, run_facts,
                     run_title, shown_fields, tool_counts_line, transcript)
from .html import MARKDOWN_BUDGET_CHARS, MARKDOWN_MESSAGE_CHARS, RUN_SYMBOL, safe_link

GITHUB_COMMENT_CHARS = 65_536  # GitHub's limit on a comment or an issue body
_ESCAPE = {ord(c): "\\" + c for c in "\\`*_[]<>#|~&$"}
_BLOCK_START = frozenset("-+=>:")
_ORDERED = re.compile(r"^(\d+)([.)])")
_INFO = re.compile(r"[^A-Za-z0-9_+#.-]")
_CUT_NOTE_CHARS = 60  # what cutting one payload adds (cut_payload's note), for the size estimate
TODO_BOX = {"completed": "[x]", "in progress": "[ ]", "pending": "[ ]", "cancelled": "[x]"}


# -- escaping ---------------------------------------------------------------------------------

def md_text(text: Any) -> str:
    """Stream text as one line of Markdown text: controls and newlines shown, and a backslash
    before every character that could start emphasis, code, a link, HTML, an entity, a table
    cell, strikethrough or math, and before a first character that could start a block
    (``-``, ``+``, ``#``, ``1.``...)."""
    t = doc_text(text if isinstance(text, str) else str(text), line=True).translate(_ESCAPE)
    if t[:1] == " ":  # four would start an indented code block
        t = "&#32;" + t[1:]
    elif t and t[0] in _BLOCK_START:
        t = "\\" + t
    elif t[:1].isdigit():
        t = _ORDERED.sub(r"\1\\\2", t, count=1)
    return t


def md_html(text: Any) -> str:
    """Stream text inside a raw HTML line (``<summary>``): controls and newlines shown, escaped."""
    return html.escape(doc_text(text if isinstance(text, str) else str(text), line=True))


def _ticks(text: str, shortest: int) -> str:
    """The shortest run of backticks, at least ``shortest`` long, that ``text`` doesn't hold."""
    ticks = "`" * shortest
    while ticks in text:  # a substring search per length (C speed) beats a regex over the text
        ticks += "`"
    return ticks


def code_span(text: Any, in_table: bool = False) -> str:
    """One line of stream text as a code span whose delimiter outruns any backtick run inside.

    ``in_table`` escapes ``|`` (GFM splits table cells before it reads code spans).
    """
    t = doc_text(text if isinstance(text, str) else str(text), line=True)
    if not t:
        return ""
    ticks = _ticks(t, 1)
    # CommonMark strips one space from each end of a span that starts and ends with one
    pad = " " if t[0] in "` " or t[-1] in "` " else ""
    span = f"{ticks}{pad}{t}{pad}{ticks}"
    return span.replace("|", "\\|") if in_table else span


def fenced(body: Any, info: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run in ``body``."""
    t = doc_text(body if isinstance(body, str) else str(body))
    fence = _ticks(t, 3)
    if t and not t.endswith("\n"):
        t += "\n"
    return f"{fence}{_INFO.sub('', info)}\n{t}{fence}"


@lru_cache(maxsize=1)
def _strict_parser() -> Any:
    from markdown_it import MarkdownIt

    # what a permissive renderer would see: raw HTML on, every link kept
    md = MarkdownIt("commonmark", {"html": True})
    md.validateLink = lambda url: True
    return md


def _fence_closed(lines: list[str], tok: Any) -> bool:
    if tok.map is None:
        return True
    last = lines[tok.map[1] - 1].strip() if tok.map[1] - 1 < len(lines) else ""
    return tok.map[1] - tok.map[0] >= 2 and last.startswith(tok.markup) and set(last) <= {tok.markup[0]}


def _needs_check(text: str) -> bool:
    # only these can start raw HTML, a link or image, or a code fence
    return "<" in text or "[" in text or "```" in text or "~~~" in text


def markdown_is_contained(text: str) -> bool:
    """True when the agent's Markdown ``text`` can go into the document as Markdown.

    False when it holds raw HTML, a link or image whose URL is not ``http``, ``https``,
    ``mailto`` or scheme-less, or a code fence that runs to its end unclosed. Only text
    with ``<``, ``[`` or a fence is parsed (markdown-it-py, CommonMark).
    """
    if not _needs_check(text):
        return True
    lines = text.split("\n")
    stack = list(_strict_parser().parse(text))
    while stack:
        tok = stack.pop()
        if tok.type in ("html_block", "html_inline"):
            return False
        if tok.type == "fence" and not _fence_closed(lines, tok):
            return False
        if tok.type in ("link_open", "image"):
            url = tok.attrGet("href") if tok.type == "link_open" else tok.attrGet("src")
            if not safe_link(str(url or "")):
                return False
        if tok.children:
            stack.extend(tok.children)
    return True


# -- blocks ------------------------------------------------------------------------------------

class Block:
    """A piece of the document that stands alone (the document may end after any block).

    Attributes:
        text: the Markdown, ending with a blank line.
        payloads: lengths (characters) of the payloads in it, before this pass cut them.
        payload_chars: characters of ``text`` that are payload (as cut, with the notes).
    """

    __slots__ = ("text", "payloads", "payload_chars")

    def __init__(self, text: str, payloads: list[int] | None = None, payload_chars: int = 0) -> None:
        self.text = text
        self.payloads = payloads or []
        self.payload_chars = payload_chars


class _Builder:
    """Collects one block's Markdown and its payloads; payloads are cut at ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.payloads: list[int] = []
        self.payload_chars = 0

    def add(self, text: str) -> None:
        self.parts.append(text)

    def payload(self, body: str, info: str = "", cut: bool = True) -> None:
        """A payload as its own fenced block (``cut`` False: already cut by the caller)."""
        body = redacted(body)  # before any cut: a secret cut in two is still found
        self.payloads.append(len(body))
        shown = cut_payload(body, self.limit) if cut else body
        self.payload_chars += len(shown)
        self.parts.append(fenced(shown, info) + "\n\n")

    def block(self) -> Block:
        return Block("".join(self.parts), self.payloads, self.payload_chars)


# identifiers that may hold a newline (a call_id does): shown as one span, the newline as \n
_ID_FIELDS = frozenset({"call_id", "session"})


def _fields(b: _Builder, fields: list[tuple[str, Any]]) -> None:
    for label, value in shown_fields(fields):
        value = value if isinstance(value, str) else str(value)
        if "\n" in value.strip("\n") and (len(value) > 200 or label not in _ID_FIELDS):
            # text of several lines (a command, a rejection's reason): a block, never a literal \n
            b.add(f"- **{md_text(label)}**:\n\n")
            b.payload(value)
        else:
            b.add(f"- **{md_text(label)}**: {code_span(value) or '—'}\n")
    b.add("\n")


def _section(b: _Builder, section: Section) -> None:
    body = section.body
    b.add(f"**{md_text(section.title)}**\n\n")
    kind = section.kind
    if kind == "fields":
        _fields(b, body)
    elif kind == "code":
        code = body if isinstance(body, str) else str(body)
        b.payload(code, lexer_for(section.language, code) if section.language else "", cut=False)
    elif kind == "diff":
        b.payload(body if isinstance(body, str) else str(body), "diff", cut=False)
    elif kind == "json":
        b.payload(dumps_json(body).decode(), "json")
    elif kind == "checklist":
        for state, text in body:
            item = md_text(text)
            note = f" \\({md_text(state)}\\)" if state not in ("completed", "pending", "cancelled") else ""
            b.add(f"- {TODO_BOX.get(state, '[ ]')} " + (f"~~{item}~~" if state == "cancelled" else item) + note + "\n")
        b.add("\n")
    elif kind == "matches":
        for file, lines in body:
            b.add(f"{md_text(file)}\n\n")
            if lines:
                b.payload("\n".join(f"{'' if n is None else n:>6}: {t}" for n, t in lines))
    elif kind == "markdown":
        text = body if isinstance(body, str) else str(body)
        shown = doc_text(text)
        if (section.language == AGENT_MARKDOWN and len(shown) <= MARKDOWN_MESSAGE_CHARS
                and markdown_is_contained(shown)):
            b.add(shown.strip("\n") + "\n\n")  # the agent's own Markdown (a plan) stays Markdown
        else:
            b.payload(text, "markdown", cut=False)
    else:
        b.payload(body if isinstance(body, str) else str(body), cut=False)


def _status(status: str) -> str:
    symbol = RUN_SYMBOL.get(status) or STATUS_STYLE.get(status, ("?", ""))[0]
    return f"{symbol} {status}"


def call_block(call: ToolCall, run: Run, run_no: int, limit: int) -> Block:
    """One tool call: an anchor, then ``<details>`` with its summary line, facts and sections."""
    b = _Builder(limit)
    sections, note = call_detail(call, run.reread, limit, raw=False, agent=run.session.agent,
                                 redact=export_redactor())
    duration = format_ms(call.duration_ms)
    summary = (f"{md_html(_status(call.status))} [{call.index}] <b>{md_html(call.tool)}</b> {md_html(call.summary)}"
               + (f" · {duration}" if duration else ""))
    b.add(f'<a id="r{run_no}-c{call.index}"></a>\n<details>\n<summary>{summary}</summary>\n\n')
    _fields(b, call_facts(call))
    if note:
        b.add(f"*{md_text(note)}*\n\n")
    for section in sections:
        _section(b, section)
    b.add("</details>\n\n")
    return b.block()


class _Messages:
    """The agent's messages as blocks, each kept as Markdown when :func:`markdown_is_contained`
    says so, else shown as its source. Checking parses the text, within the HTML export's
    budgets: no message over ``MARKDOWN_MESSAGE_CHARS``, ``MARKDOWN_BUDGET_CHARS`` in all."""

    def __init__(self) -> None:
        self.left = MARKDOWN_BUDGET_CHARS

    def block(self, text: str) -> Block:
        if not text.strip():
            return Block("")
        shown = doc_text(text)
        if _needs_check(shown):
            if len(shown) > min(MARKDOWN_MESSAGE_CHARS, self.left):
                return self._source(shown, "it is too long to check")
            self.left -= len(shown)
            if not markdown_is_contained(shown):
                return self._source(shown, "it holds raw HTML, an unsafe link or an unclosed code fence")
        return Block(shown.strip("\n") + "\n\n")

    @staticmethod
    def _source(shown: str, why: str) -> Block:
        return Block(f"*Shown as source: {why}.*\n\n" + fenced(shown, "markdown") + "\n\n")


def _run_blocks(run: Run, run_no: int, several: bool, limit: int, messages: _Messages) -> Iterator[Block]:
    s = run.session
    b = _Builder(limit)
    b.add(f'<a id="run-{run_no}"></a>\n\n## {md_text(run_title(run, several))} · {md_text(_status(s.status))}\n\n'
          "| | |\n|---|---|\n")
    for label, value in shown_fields(run_facts(run)):
        b.add(f"| **{md_text(label)}** | {code_span(value, in_table=True)} |\n")
    b.add("\n")
    if s.prompt is not None:
        b.add("**Prompt**\n\n")
        b.payload(s.prompt)
    b.add("### Transcript\n\n")
    yield b.block()
    for kind, item in transcript(s):
        if kind == "segment":
            yield messages.block(item.text)
        elif kind == "thinking":
            if item.text.strip():
                t = _Builder(limit)
                t.add(f"<details>\n<summary>Thinking · {len(item.text):,} characters</summary>\n\n")
                t.payload(item.text)
                t.add("</details>\n\n")
                yield t.block()
        elif kind == "tool":
            yield call_block(item, run, run_no, limit)
        else:
            yield Block(f"> · {md_text(item.text)}\n\n")
    final = final_text(s)
    if final:
        yield Block("### Final text (from the result)\n\n")
        yield messages.block(final)
    if s.tool_calls:
        yield Block(f"### Tool calls ({len(s.tool_calls):,})\n\n| # | status | tool | summary | duration |\n"
                    "|---:|---|---|---|---:|\n")
        for call in s.tool_calls.values():
            summary = code_span(call.summary, in_table=True)
            if call.detail:
                summary += " " + md_text(f"({shown_detail(call.detail, f'call {call.index} below')})")
            yield Block(f"| [{call.index}](#r{run_no}-c{call.index}) | {md_text(_status(call.status))} | "
                        f"{code_span(call.tool, in_table=True)} | {summary} | {call_duration_text(call)} |\n")
        yield Block("\n")
    yield Block("### Diagnostics\n\n")
    listed = 0
    for d in s.diagnostics:
        listed += 1
        yield Block(f"- line {d.line}: {code_span(d.message)}\n")
    if s.unread and s.unknown:  # a file no agent wrote: said once, not a line per object
        listed += 1
        yield Block(f"- {md_text(s.unread_words())}\n")
    for u in s.unknown if not s.unread else ():
        listed += 1
        yield Block(f"- line {u.line}: unknown event {code_span(u.label)}\n")
    if s.invalid_lines > len(s.diagnostics):
        yield Block(f"- {plural(s.invalid_lines - len(s.diagnostics), 'more invalid line')} not listed\n")
    if run.stderr:
        e = _Builder(limit)
        e.add("\n**stderr of the command**\n\n")
        e.payload("\n".join(run.stderr))
        yield e.block()
    elif not listed:
        yield Block("None: every line was an event cursor-watch knows.\n")
    yield Block("\n")


def blocks(runs: list[Run], limit: int = EXPORT_PAYLOAD_CHARS) -> Iterator[Block]:
    """The document as :class:`Block` s, every payload cut at ``limit`` characters."""
    several = len(runs) > 1
    if several:
        title = f"cursor-watch: {len(runs)} runs"
    else:
        title = f"cursor-watch: {runs[0].session.model or 'agent'} run" if runs else "cursor-watch: no run"
    agents = ", ".join(dict.fromkeys(agent_command(r.session.agent) for r in runs)) or "cursor-agent"
    yield Block(f"# {md_text(title)}\n\nA {md_text(agents)} run recorded by cursor-watch {__version__}. "
                "Each tool call opens to its detail.\n\n")
    if several:
        toc = ["## Runs\n\n"]
        for n, run in enumerate(runs, 1):
            s = run.session
            toc.append(f"{n}. [{md_text(run_title(run, True))}](#run-{n}) {md_text(_status(s.status))} · "
                       f"{md_text(model_label(s.model, s.events))} · {md_text(tool_counts_line(s))}\n")
        yield Block("".join(toc) + "\n")
    messages = _Messages()  # one checking budget for the document
    for n, run in enumerate(runs, 1):
        yield from _run_blocks(run, n, several, limit, messages)


# -- the size limit ----------------------------------------------------------------------------

def payload_cap(fixed: int, payloads: list[int], budget: int) -> int:
    """The largest cap ``c`` so that ``fixed + sum(min(p, c) + note for each cut p) <= budget``.

    Args:
        fixed: characters of the document outside its payloads.
        payloads: each payload's length (characters).
        budget: characters the document may have.

    Returns:
        The cap (0 when even empty payloads don't fit).
    """
    sizes = sorted(payloads)
    prefix = [0]
    for p in sizes:
        prefix.append(prefix[-1] + p)

    def total(c: int) -> int:
        i = bisect.bisect_right(sizes, c)  # payloads up to c stay whole; the others are cut
        return fixed + prefix[i] + (len(sizes) - i) * (c + _CUT_NOTE_CHARS)

    lo, hi = 0, max(sizes, default=0)
    if total(lo) > budget:
        return 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if total(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _collect(runs: list[Run], limit: int, budget: int) -> tuple[list[str] | None, int, list[int]]:
    """One pass: the blocks' texts if they fit in ``budget`` (else None), the characters
    outside payloads, and every payload's length."""
    texts: list[str] | None = []
    size = fixed = 0
    payloads: list[int] = []
    for block in blocks(runs, limit):
        size += len(block.text)
        payloads += block.payloads
        fixed += len(block.text) - block.payload_chars
        if texts is not None:
            if size <= budget:
                texts.append(block.text)
            else:
                texts = None  # too big: keep measuring, stop keeping
    return texts, fixed, payloads


def _truncated(runs: list[Run], limit: int, budget: int) -> Iterator[str]:
    """The blocks that fit in ``budget`` characters, then a note on what was left out."""
    size = 0
    left_chars = left_blocks = 0
    for block in blocks(runs, limit):
        if left_blocks == 0 and size + len(block.text) <= budget - 200:
            size += len(block.text)
            yield block.text
        else:
            left_blocks += 1
            left_chars += len(block.text)
    if left_blocks:
        yield (f"\n\n---\n\n*… {left_chars:,} more characters ({left_blocks:,} blocks) left out to stay under "
               f"{budget + 1:,} characters (`--export-max-chars`).*\n")


def write_markdown(runs: list[Run], write: Callable[[str], Any], max_chars: int | None = None,
                   limit: int = EXPORT_PAYLOAD_CHARS) -> None:
    """Write the Markdown document for ``runs`` through ``write(str)``.

    Without ``max_chars`` the document is written block by block (memory stays bounded).
    With it, the document has fewer than ``max_chars`` characters (a few passes over the
    runs, each re-reading the payloads; only a document that fits is held in memory).

    Args:
        runs: the runs, in the order the document shows them (several: a table of contents).
        write: receives the document in pieces.
        max_chars: the most characters the document may have (at least a few hundred).
        limit: characters of one payload shown before any size limit applies.
    """
    if max_chars is None:
        for block in blocks(runs, limit):
            write(block.text)
        return
    budget = max_chars - 1  # "under N characters"
    cap = limit
    for _attempt in range(5):
        texts, fixed, payloads = _collect(runs, cap, budget)
        if texts is not None:
            for text in texts:
                write(text)
            return
        # cut every payload to the same size, the largest that fits (estimated, then checked)
        cap = min(payload_cap(fixed, payloads, budget), cap - 1)
        if cap <= 0:
            cap = 0  # even empty payloads don't fit: notes only, and the end is cut
            break
    for text in _truncated(runs, cap, budget):
        write(text)
