"""``--export FILE.html``: one self-contained HTML file for one or several runs.

The file works offline and loads nothing: CSS and a small script are inline, there are no
fonts, images or remote resources, and a Content-Security-Policy meta tag forbids every
load and every script but the page's own (by its SHA-256 hash; styles likewise). It reads
fully without JavaScript: the script only adds a filter for tool calls, "expand all", and
opens a call when a link points at it.

Everything from the stream is untrusted (text, tool output, call ids, model, cwd, session
id, tool names, paths, notes, diagnostics): every string is passed through
:func:`cursor_watch.views.export.common.doc_text` (secrets redacted unless ``--no-redact``, then
control characters shown as ``\\e``, ``\\x07``...) and HTML-escaped, attributes included.
The agent's Markdown is rendered by markdown-it-py (CommonMark) with raw HTML off (it comes
out escaped); links keep only ``http``, ``https``, ``mailto`` and scheme-less targets (never
``javascript:``, ``data:`` or ``vbscript:``), get ``rel="noopener noreferrer"`` and are shown
with their URL; images become such links.

Each tool call is a ``<details>`` element with ``data-call-id`` set to its ``call_id``
(newlines and tabs kept as character references, other control characters shown) and the
same per-tool sections as the TUI's detail (:func:`cursor_watch.core.tools.detail_sections`).
Code is highlighted by Pygments by the file's extension until the document has highlighted
:data:`HIGHLIGHT_BUDGET_CHARS` characters (Pygments writes about 0.5 to 1.5 MB/s); later
code is shown uncoloured, with a note.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

from ... import __version__
from ...fmt import model_label, plural, shown_detail
from ...core.canonical import agent_command
from ...core.model import Session, ToolCall
from ...stream.payloads import call_detail
from ...fmt import call_duration_text, format_ms
from ..labels import STATUS_STYLE
from ..summary import dumps_json
from ...core.runs import Run
from ...safe import visible_doc
from ...core.tools import RAW, Section, cut_payload, lexer_for
from .common import (EXPORT_PAYLOAD_CHARS, call_facts, doc_text, export_redactor, final_text, redacted, run_facts,
                     run_title, shown_fields, tool_counts_line, transcript)

HIGHLIGHT_BUDGET_CHARS = 250_000  # code characters highlighted per document; the rest is plain
MARKDOWN_BUDGET_CHARS = 1_000_000  # characters of Markdown parsed per document (see Renderer)
MARKDOWN_MESSAGE_CHARS = EXPORT_PAYLOAD_CHARS  # a longer message is shown as text
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.\-]*):")
_HTML_SPECIAL = re.compile("[&<>\"']")
TODO_MARK = {"completed": "☑", "in progress": "◐", "pending": "☐", "cancelled": "☒"}


# -- escaping ---------------------------------------------------------------------------------

def _agents(runs: list[Run]) -> str:
    """The agent CLIs of ``runs``, in order of first appearance (``cursor-agent, claude``)."""
    return ", ".join(dict.fromkeys(agent_command(r.session.agent) for r in runs)) or "cursor-agent"


def esc(text: Any, line: bool = False) -> str:
    """Stream text as HTML text: secrets redacted (:func:`~cursor_watch.views.export.common.redacted`),
    control characters shown (:func:`visible_doc`), ``& < > " '`` escaped. ``line`` shows
    newlines and tabs too (one-line fields)."""
    if text.__class__ is not str:
        text = str(text)
    text = redacted(text)
    if text.isprintable() and not _HTML_SPECIAL.search(text):  # most short values: nothing to do
        return text
    return html.escape(visible_doc(text, line))


def attr(text: Any) -> str:
    """Stream text as a double-quoted attribute value: escaped, newlines and tabs kept as
    ``&#10;`` and ``&#9;`` (a ``call_id`` holds a newline), other controls shown."""
    return esc(text).replace("\n", "&#10;").replace("\t", "&#9;")


def safe_link(url: str) -> bool:
    """markdown-it's link check: True for ``http``, ``https``, ``mailto`` and scheme-less URLs.

    markdown-it passes the URL after decoding entities and percent-encoding, so
    ``&#106;avascript:`` arrives as ``javascript:`` and is refused.
    """
    m = _SCHEME.match(url)
    return m is None or m.group(1).lower() in SAFE_SCHEMES


# -- the agent's Markdown ----------------------------------------------------------------------

def _link_text(tokens: list, idx: int) -> str:
    out = []
    for tok in tokens[idx + 1:]:
        if tok.type == "link_close":
            break
        out.append(tok.content)
    return "".join(out)


def _link_open(self, tokens, idx, options, env) -> str:
    tok = tokens[idx]
    href = tok.attrGet("href") or ""
    tok.attrSet("rel", "noopener noreferrer")
    # the URL is shown after the text unless the text is the URL (an autolink)
    text = _link_text(tokens, idx)
    env.setdefault("hrefs", []).append("" if text in (href, href.removeprefix("mailto:")) else href)
    return self.renderToken(tokens, idx, options, env)


def _link_close(self, tokens, idx, options, env) -> str:
    hrefs = env.get("hrefs") or [""]
    href = hrefs.pop()
    return "</a>" + (f' <span class="url">({html.escape(href)})</span>' if href else "")


def _image(self, tokens, idx, options, env) -> str:
    # an image would be a remote load: show it as a link with its URL instead
    tok = tokens[idx]
    src = html.escape(tok.attrGet("src") or "")
    alt = html.escape(self.renderInlineAsText(tok.children or [], options, env))
    return f'<a href="{src}" rel="noopener noreferrer">[image: {alt}]</a> <span class="url">({src})</span>'


def _cell_open(self, tokens, idx, options, env) -> str:
    # a style attribute would be refused by the CSP (and logged): align by class instead
    tok = tokens[idx]
    style = tok.attrGet("style") or ""
    if style:
        tok.attrs.pop("style", None)
        tok.attrSet("class", "al-" + style.rsplit(":", 1)[-1].strip())
    return self.renderToken(tokens, idx, options, env)


@lru_cache(maxsize=1)
def markdown_renderer() -> Any:
    """markdown-it-py as the TUI parses (:func:`cursor_watch.views.mdtext.text_parser`: CommonMark with
    tables and strikethrough, raw HTML and character references shown as text, each line a
    line), safe links."""
    from ..mdtext import text_parser

    md = text_parser()
    md.validateLink = safe_link
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.add_render_rule("th_open", _cell_open)
    md.add_render_rule("td_open", _cell_open)
    return md


# Text none of whose characters or line starts can begin CommonMark syntax: its rendering is
# its paragraphs, escaped (12 of the 26 messages in the real captures; about 6x faster than parsing)
_MD_SYNTAX = re.compile(r"[`*_<>\[\]|~&\\]|^[ \t>+=#-]|^\d+[.)]|[ \t]$", re.M)
_BLANK_LINES = re.compile(r"\n{2,}")


def render_markdown(text: str) -> str:
    """The agent's Markdown as safe HTML (see the module docstring), with no size limit."""
    shown = doc_text(text)
    return _render_shown(shown, bool(_MD_SYNTAX.search(shown)))


def _render_shown(shown: str, syntax: bool) -> str:
    if not syntax:
        paragraphs = _BLANK_LINES.split(html.escape(shown, quote=False).replace('"', "&quot;").strip("\n"))
        return "".join(f"<p>{p.replace(chr(10), '<br />' + chr(10))}</p>\n" for p in paragraphs if p)
    return markdown_renderer().render(shown, {})


# -- code ------------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _lexer(name: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:  # keep leading and trailing newlines: line numbers must stay right
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True, classprefix="pg-")


def _numbered(code_html: str, lines: int) -> str:
    # line numbers in a column of their own: one string for the block, not one per line
    gutter = "\n".join(map(str, range(1, lines + 1)))
    return (f'<div class="code-wrap"><pre class="gutter" aria-hidden="true">{gutter}</pre>'
            f'<pre class="code hl"><code>{code_html}</code></pre></div>')


class Renderer:
    """The costly renderings of one document, each within a budget of characters.

    Pygments colours code until :data:`HIGHLIGHT_BUDGET_CHARS` have been coloured (it writes
    0.3 to 1.5 MB/s); markdown-it parses the agent's Markdown until
    :data:`MARKDOWN_BUDGET_CHARS` have been parsed, and never a message longer than
    :data:`MARKDOWN_MESSAGE_CHARS` (hostile text such as 100,000 ``[`` takes it seconds).
    Past a budget, code and Markdown are shown as escaped text, with a note.
    """

    def __init__(self, code_budget: int = HIGHLIGHT_BUDGET_CHARS, markdown_budget: int = MARKDOWN_BUDGET_CHARS) -> None:
        self.code_budget = self.code_left = code_budget
        self.markdown_budget = self.markdown_left = markdown_budget

    def markdown(self, text: str) -> str:
        """The agent's Markdown (or a fetched page's) as HTML, within the budget."""
        shown = doc_text(text)
        syntax = bool(_MD_SYNTAX.search(shown))  # text without any costs nothing
        if syntax and len(shown) > min(MARKDOWN_MESSAGE_CHARS, self.markdown_left):
            return ('<p class="note">Shown as text: an export renders the Markdown of messages of up to '
                    f"{MARKDOWN_MESSAGE_CHARS:,} characters, {self.markdown_budget:,} in all.</p>"
                    f'<pre class="text">{html.escape(shown)}</pre>')
        if syntax:
            self.markdown_left -= len(shown)
        return _render_shown(shown, syntax)

    def code(self, code: str, path: str) -> str:
        """``code`` with line numbers, coloured by the lexer for ``path`` while the budget lasts."""
        code = doc_text(code).removesuffix("\n")
        lexer = _lexer(lexer_for(path, code)) if path else None
        out = None
        note = ""
        if lexer is not None and lexer.name != "Text only":
            if len(code) <= self.code_left:
                from pygments import highlight

                self.code_left -= len(code)
                out = highlight(code, lexer, _formatter()).removesuffix("\n")
            else:
                note = (f'<p class="note">Not coloured: an export colours {self.code_budget:,} characters of code at '
                        "most, and this block would pass that.</p>")
        if out is None:
            out = html.escape(code)
        return note + _numbered(out, code.count("\n") + 1)


# a unified diff's lines by their first characters; file headers first (they start with +/- too)
_DIFF_MARKS = ((re.compile(r"^((?:\+\+\+|---|diff |index ).*)$", re.M), r'<span class="d-file">\1</span>'),
               (re.compile(r"^(@@.*)$", re.M), r'<span class="d-hunk">\1</span>'),
               (re.compile(r"^(\+.*)$", re.M), r'<span class="d-add">\1</span>'),
               (re.compile(r"^(-.*)$", re.M), r'<span class="d-del">\1</span>'))


def render_diff(diff: str) -> str:
    """A unified diff, each line coloured by its first characters (regular expressions, no
    lexer: fast at any size)."""
    out = html.escape(doc_text(diff).rstrip("\n"))
    for pattern, template in _DIFF_MARKS:
        out = pattern.sub(template, out)
    return f'<pre class="code diff"><code>{out}</code></pre>'


# -- sections -----------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _label(label: str) -> str:
    return f"<dt>{esc(label)}</dt>"  # labels repeat: escape each once


def fields_html(fields: Iterable[tuple[str, Any]], cls: str = "fields") -> str:
    """``(label, value)`` pairs as a ``<dl>``."""
    rows = "".join(f"{_label(label)}<dd>{esc(value)}</dd>" for label, value in shown_fields(list(fields)))
    return f'<dl class="{cls}">{rows}</dl>'


def render_section(section: Section, render: Renderer) -> str:
    """One :class:`~cursor_watch.core.tools.Section` as HTML, its title included."""
    body = section.body
    kind = section.kind
    if kind == "fields":
        inner = fields_html(body)
    elif kind == "code":
        inner = render.code(body if isinstance(body, str) else str(body), section.language)
    elif kind == "diff":
        inner = render_diff(body if isinstance(body, str) else str(body))
    elif kind == "json" and section.language != RAW:
        # JSON the tool wrote into a string (an MCP result), decoded: highlighted like code
        inner = render.code(dumps_json(body).decode(), "decoded.json")
    elif kind == "json":
        inner = f'<pre class="code json"><code>{esc(dumps_json(body).decode())}</code></pre>'
    elif kind == "checklist":
        items = []
        for state, text in body:
            known = state if state in TODO_MARK else "pending"
            items.append(f'<li class="todo todo-{known.replace(" ", "-")}"><span class="mark">{TODO_MARK[known]}</span> '
                         f"{esc(text, line=True)}</li>")
        inner = f'<ul class="checklist">{"".join(items)}</ul>'
    elif kind == "matches":
        parts = []
        for file, lines in body:
            rows = "\n".join(f'<span class="ln">{esc("" if n is None else n)}</span>{esc(t, line=True)}'
                             for n, t in lines)
            parts.append(f'<div class="mfile">{esc(file, line=True)}</div>'
                         + (f'<pre class="code"><code>{rows}</code></pre>' if rows else ""))
        inner = '<div class="matches">' + "".join(parts) + "</div>"
    elif kind == "markdown":
        inner = f'<div class="md page">{render.markdown(body if isinstance(body, str) else str(body))}</div>'
    else:  # "text" and anything newer
        inner = f'<pre class="text">{esc(body)}</pre>'
    return f'<div class="section"><h5>{esc(section.title, line=True)}</h5>{inner}</div>'


RUN_SYMBOL = {"error": "✖", "incomplete": "…"}  # a run's status beside the tool-call statuses


def status_badge(status: str) -> str:
    """``<span class="st st-failure">✖ failure</span>``, for a tool call's or a run's status."""
    symbol = RUN_SYMBOL.get(status) or STATUS_STYLE.get(status, ("?", ""))[0]
    cls = status if status in STATUS_STYLE or status in RUN_SYMBOL else "other"
    return f'<span class="st st-{cls}">{symbol} {esc(status, line=True)}</span>'


def call_anchor(run_no: int, call: ToolCall) -> str:
    """The element id of a call: ``r1-c3`` (made here, never from the stream)."""
    return f"r{run_no}-c{call.index}"


def render_call(call: ToolCall, run: Run, run_no: int, render: Renderer, limit: int) -> str:
    """One tool call: a ``<details>`` with status, tool, summary and duration in its
    ``<summary>``, and the call's facts and detail sections inside."""
    sections, note = call_detail(call, run.reread, limit, raw=False, agent=run.session.agent,
                                 redact=export_redactor())
    parts = [fields_html(call_facts(call), "fields facts")]
    if note:
        parts.append(f'<p class="note">{esc(note)}</p>')
    parts += [render_section(section, render) for section in sections]
    duration = format_ms(call.duration_ms)
    summary = (f'{status_badge(call.status)} <span class="idx">[{call.index}]</span> '
               f'<span class="tool">{esc(call.tool, line=True)}</span> '
               f'<span class="sum">{esc(call.summary, line=True)}</span>'
               + (f' <span class="dur">{duration}</span>' if duration else ""))
    st = call.status if call.status in STATUS_STYLE else "other"
    return (f'<details class="call call-{st}" id="{call_anchor(run_no, call)}" data-call-id="{attr(call.call_id)}" '
            f'data-status="{attr(call.status)}" data-tool="{attr(call.tool)}"><summary>{summary}</summary>'
            f'<div class="call-body">{"".join(parts)}</div></details>\n')


# -- the document ------------------------------------------------------------------------------

CSS_BASE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --panel: #f6f8fa; --accent: #0969da; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --inc: #8250df;
  --run: #0550ae; --add-bg: #dafbe1; --del-bg: #ffebe9; --hunk: #8250df; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --panel: #151b23; --accent: #4493f8;
    --ok: #3fb950; --bad: #f85149; --warn: #d29922; --inc: #ab7df8; --run: #58a6ff; --add-bg: #12361f;
    --del-bg: #4b1619; --hunk: #bc8cff; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.page-wrap { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; margin: 1.5rem 0 .5rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line);
  overflow-wrap: anywhere; }
h3 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
h5 { font-size: .85rem; margin: .9rem 0 .3rem; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
a { color: var(--accent); }
.sub, .dim, .url { color: var(--muted); }
.url { overflow-wrap: anywhere; font-size: .9em; }
code, pre, .mono, dd, .sum, .tool, .idx, .dur { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo,
  Consolas, "Liberation Mono", monospace; }
pre, code { font-size: 13px; }
pre { margin: 0; padding: .6rem .75rem; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; overflow-x: auto; line-height: 1.45; }
pre.text, pre.prompt, pre.think { white-space: pre-wrap; overflow-wrap: anywhere; }
.ln { display: inline-block; min-width: 2.5em; padding-right: 1em; text-align: right; color: var(--muted);
  user-select: none; -webkit-user-select: none; }
.code-wrap { display: flex; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
.code-wrap > pre { border: 0; border-radius: 0; background: none; }
.code-wrap > pre.code { flex: 1 1 auto; min-width: 0; padding-left: .25rem; }
pre.gutter { flex: none; overflow: hidden; text-align: right; color: var(--muted); padding-right: .5rem;
  border-right: 1px solid var(--line); user-select: none; -webkit-user-select: none; }
dl.fields { display: grid; grid-template-columns: minmax(4rem, max-content) minmax(0, 1fr); gap: .15rem 1rem;
  margin: .5rem 0; font-size: 13px; }
dl.fields dt { font-weight: 600; color: var(--muted); overflow-wrap: anywhere; }
dl.fields dd { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 13px; }
.prompt { margin: .75rem 0; }
.transcript > * { margin: .6rem 0; }
.msg { padding: .1rem .9rem; border-left: 3px solid var(--accent); overflow-wrap: anywhere; }
.md pre { white-space: pre; }
.md table { border-collapse: collapse; display: block; overflow-x: auto; }
.md th, .md td { border: 1px solid var(--line); padding: .25rem .6rem; }
.md .al-right { text-align: right; } .md .al-center { text-align: center; } .md .al-left { text-align: left; }
.md blockquote { margin: 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
.md code { background: var(--panel); padding: .1em .3em; border-radius: 4px; }
.md pre code { background: none; padding: 0; }
details { border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
details.call, section.run { scroll-margin-top: 4rem; }  /* below the sticky filter bar */
details > summary { cursor: pointer; padding: .35rem .6rem; overflow-wrap: anywhere; }
details[open] > summary { border-bottom: 1px solid var(--line); }
.call-body, details.thinking > pre { padding: .25rem .75rem .75rem; }
details.thinking { border-style: dashed; color: var(--muted); }
details.thinking > pre { border: 0; background: none; font-style: italic; }
.call .tool { font-weight: 600; }
.call .sum { font-size: 13px; }
.call .dur, .call .idx { color: var(--muted); font-size: 13px; }
.st { font-weight: 600; white-space: nowrap; }
.st-success { color: var(--ok); } .st-failure, .st-error { color: var(--bad); } .st-rejected { color: var(--warn); }
.st-incomplete { color: var(--inc); } .st-running { color: var(--run); } .st-other { color: var(--muted); }
details.call-failure { border-left: 4px solid var(--bad); }
details.call-rejected { border-left: 4px solid var(--warn); }
details.call-incomplete { border-left: 4px solid var(--inc); }
.note { color: var(--warn); margin: .3rem 0; overflow-wrap: anywhere; }
.note.connection { color: var(--muted); }
.d-add { background: var(--add-bg); display: inline-block; min-width: 100%; }
.d-del { background: var(--del-bg); display: inline-block; min-width: 100%; }
.d-hunk { color: var(--hunk); } .d-file { font-weight: 600; }
ul.checklist { list-style: none; padding-left: .25rem; margin: .25rem 0; }
.todo .mark { display: inline-block; width: 1.3em; }
.todo-completed .mark { color: var(--ok); } .todo-in-progress .mark { color: var(--run); }
.todo-cancelled { color: var(--muted); text-decoration: line-through; }
.mfile { font-weight: 600; margin: .5rem 0 .2rem; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
.scroll { overflow-x: auto; }
table.calls { border-collapse: collapse; width: 100%; font-size: 14px; }
table.calls th, table.calls td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left;
  vertical-align: top; }
table.calls td.sum { overflow-wrap: anywhere; min-width: 12rem; }
table.calls td.num, table.calls th.num { text-align: right; white-space: nowrap; }
.badge { font-weight: 600; }
nav.toc ol { padding-left: 1.5rem; }
nav.toc li { margin: .25rem 0; overflow-wrap: anywhere; }
.filter { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center;
  padding: .5rem 0; background: var(--bg); border-bottom: 1px solid var(--line); }
.filter input { flex: 1 1 12rem; min-width: 0; }
.filter input, .filter select, .filter button { font: inherit; padding: .25rem .5rem; color: var(--fg);
  background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
.hidden { display: none !important; }
footer { margin: 2rem 0 1rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 36rem) {  /* a phone: less margin, the filter bar scrolls away */
  .page-wrap { padding: .6rem; }
  .filter { position: static; }
  dl.fields { gap: .1rem .6rem; }
  pre, code, dl.fields { font-size: 12px; }
}
"""

SCRIPT = """
(function () {
  "use strict";
  var calls = Array.prototype.slice.call(document.querySelectorAll("details.call"));
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    for (var d = el; d; d = d.parentElement) { if (d.tagName === "DETAILS") { d.open = true; } }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  if (!calls.length) { return; }
  var keys = calls.map(function (d) {
    return (d.getAttribute("data-tool") + " " + d.querySelector("summary").textContent + " " +
            d.getAttribute("data-call-id")).toLowerCase();
  });
  var rows = {};
  Array.prototype.forEach.call(document.querySelectorAll("tr[data-call]"), function (tr) {
    rows[tr.getAttribute("data-call")] = tr;
  });
  var bar = document.createElement("div");
  bar.className = "filter";
  var text = document.createElement("input");
  text.type = "search";
  text.placeholder = "Filter tool calls (tool, summary, call_id)";
  text.setAttribute("aria-label", "Filter tool calls");
  var status = document.createElement("select");
  status.setAttribute("aria-label", "Status");
  ["all", "success", "failure", "rejected", "incomplete", "running"].forEach(function (s) {
    var o = document.createElement("option"); o.value = s === "all" ? "" : s; o.textContent = s; status.appendChild(o);
  });
  function button(label, open) {
    var b = document.createElement("button"); b.type = "button"; b.textContent = label;
    b.addEventListener("click", function () { calls.forEach(function (d) { if (!d.classList.contains("hidden")) { d.open = open; } }); });
    return b;
  }
  var count = document.createElement("span"); count.className = "dim";
  function apply() {
    var q = text.value.toLowerCase(), s = status.value, shown = 0;
    calls.forEach(function (d, i) {
      var ok = (!s || d.getAttribute("data-status") === s) && (!q || keys[i].indexOf(q) >= 0);
      d.classList.toggle("hidden", !ok);
      var tr = rows[d.id]; if (tr) { tr.classList.toggle("hidden", !ok); }
      if (ok) { shown++; }
    });
    count.textContent = shown + " of " + calls.length + " tool calls";
  }
  text.addEventListener("input", apply);
  status.addEventListener("change", apply);
  [text, status, button("Expand all", true), button("Collapse all", false), count].forEach(function (el) { bar.appendChild(el); });
  var main = document.querySelector("main");
  main.parentNode.insertBefore(bar, main);
  apply();
})();
"""


def _pygments_css(style: str, scope: str) -> str:
    from pygments.formatters import HtmlFormatter
    from pygments.util import ClassNotFound

    try:
        defs = HtmlFormatter(style=style, classprefix="pg-").get_style_defs(scope)
    except ClassNotFound:  # an older Pygments without this style
        defs = HtmlFormatter(style="monokai" if "dark" in style else "default", classprefix="pg-").get_style_defs(scope)
    # token colours only: the page sets its own background and font
    return "\n".join(line for line in defs.splitlines() if line.startswith(f"{scope} .pg-"))


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The page's CSS: the base sheet, then Pygments' token colours for light and dark."""
    return (CSS_BASE + _pygments_css("default", ".hl") + "\n@media (prefers-color-scheme: dark) {\n"
            + _pygments_css("github-dark", ".hl") + "\n}\n")


def csp_hash(text: str) -> str:
    """``'sha256-…'``: the CSP source that allows exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy() -> str:
    """Nothing loads from anywhere; only this page's own style sheet and script run."""
    return (f"default-src 'none'; style-src {csp_hash(stylesheet())}; script-src {csp_hash(SCRIPT)}; "
            "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; "
            "frame-src 'none'; worker-src 'none'; manifest-src 'none'; base-uri 'none'; form-action 'none'")


def _first_line(text: str | None, limit: int = 120) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _toc(runs: list[Run]) -> str:
    items = []
    for n, run in enumerate(runs, 1):
        s = run.session
        items.append(f'<li><a href="#run-{n}">{esc(run_title(run, True), line=True)}</a> '
                     f'{status_badge(s.status)} <span class="dim">· {esc(model_label(s.model, s.events), line=True)} · '
                     f'{esc(tool_counts_line(s), line=True)}</span>'
                     + (f'<br><span class="dim">{esc(_first_line(redacted(s.prompt)), line=True)}</span>'
                        if s.prompt else "")
                     + "</li>")
    return f'<nav class="toc"><h2>Runs</h2><ol>{"".join(items)}</ol></nav>\n'


def _entry_html(kind: str, item: Any, run: Run, run_no: int, render: Renderer, limit: int) -> str:
    if kind == "segment":
        return f'<div class="msg md">{render.markdown(item.text)}</div>\n' if item.text.strip() else ""
    if kind == "thinking":
        text = item.text
        if not text.strip():
            return ""
        return (f'<details class="thinking"><summary>Thinking <span class="dim">· {len(text):,} characters</span>'
                f'</summary><pre class="think">{esc(cut_payload(redacted(text), limit))}</pre></details>\n')
    if kind == "tool":
        return render_call(item, run, run_no, render, limit)
    cls = "note connection" if item.kind == "connection" else "note"
    return f'<p class="{cls}">· {esc(item.text, line=True)}</p>\n'


def _calls_table(session: Session, run_no: int) -> Iterator[str]:
    """The table of tool calls, a row at a time (a long run has many)."""
    yield ('<div class="scroll"><table class="calls"><thead><tr><th class="num">#</th><th>status</th><th>tool</th>'
           '<th>summary</th><th class="num">duration</th></tr></thead><tbody>\n')
    for call in session.tool_calls.values():
        anchor = call_anchor(run_no, call)
        detail = shown_detail(call.detail, f"call {call.index} below")
        summary = esc(call.summary, line=True) + (f' <span class="dim">({esc(detail, line=True)})</span>'
                                                 if call.detail else "")
        yield (f'<tr data-call="{anchor}"><td class="num"><a href="#{anchor}">{call.index}</a></td>'
               f"<td>{status_badge(call.status)}</td><td>{esc(call.tool, line=True)}</td>"
               f'<td class="sum"><a href="#{anchor}">{summary}</a></td>'
               f'<td class="num">{call_duration_text(call)}</td></tr>\n')
    yield "</tbody></table></div>\n"


def _diagnostics(run: Run) -> str:
    s = run.session
    parts = []
    for d in s.diagnostics:
        parts.append(f"<li>line {d.line}: {esc(d.message, line=True)}</li>")
    if s.unread and s.unknown:  # a file no agent wrote: said once, not a line per object
        parts.append(f"<li>{esc(s.unread_words(), line=True)}</li>")
    for u in s.unknown if not s.unread else ():
        parts.append(f"<li>line {u.line}: unknown event {esc(u.label, line=True)}</li>")
    items = f"<ul>{''.join(parts)}</ul>" if parts else ""
    if s.invalid_lines > len(s.diagnostics):
        items += f'<p class="dim">{plural(s.invalid_lines - len(s.diagnostics), "more invalid line")} not listed</p>'
    if run.stderr:
        items += "<h5>stderr of the command</h5><pre class=\"text\">" + esc("\n".join(run.stderr)) + "</pre>"
    return items or '<p class="dim">None: every line was an event cursor-watch knows.</p>'


def write_html(runs: list[Run], write: Callable[[str], Any], limit: int = EXPORT_PAYLOAD_CHARS) -> None:
    """Write the HTML document for ``runs`` piece by piece through ``write(str)``.

    Memory stays bounded: one tool call's payloads at a time (re-read from the source by
    byte offset), records read back from the spill file in batches.

    Args:
        runs: the runs, in the order the document shows them (one run: no table of contents).
        write: receives the document in pieces.
        limit: characters of one payload shown; the rest is cut with a note.
    """
    several = len(runs) > 1
    render = Renderer()
    if several:
        title = f"cursor-watch: {len(runs)} runs"
    else:
        title = f"cursor-watch: {runs[0].session.model or 'agent'} run" if runs else "cursor-watch: no run"
    write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">\n'
          '<meta name="referrer" content="no-referrer">\n'
          '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
          '<meta name="color-scheme" content="light dark">\n'
          f'<meta name="generator" content="cursor-watch {esc(__version__)}">\n'
          f"<title>{esc(title, line=True)}</title>\n<style>{stylesheet()}</style>\n</head>\n<body>\n"
          '<div class="page-wrap">\n'
          f'<header><h1>{esc(title, line=True)}</h1><p class="sub">A {esc(_agents(runs))} run recorded by cursor-watch '
          f"{esc(__version__)}. Every tool call opens to its detail.</p></header>\n")
    if several:
        write(_toc(runs))
    write("<main>\n")
    for n, run in enumerate(runs, 1):
        s = run.session
        write(f'<section class="run" id="run-{n}">\n<h2>{esc(run_title(run, several), line=True)} '
              f'<span class="badge">{status_badge(s.status)}</span></h2>\n')
        write(fields_html(run_facts(run)) + "\n")
        if s.prompt is not None:
            prompt = esc(cut_payload(redacted(s.prompt), limit))
            write(f'<div class="prompt"><h5>Prompt</h5><pre class="prompt">{prompt}</pre></div>\n')
        write('<h3>Transcript</h3>\n<div class="transcript">\n')
        for kind, item in transcript(s):
            write(_entry_html(kind, item, run, n, render, limit))
        write("</div>\n")
        final = final_text(s)
        if final:
            write(f'<h3>Final text (from the result)</h3>\n<div class="msg md">{render.markdown(final)}</div>\n')
        if s.tool_calls:
            write(f"<h3>Tool calls ({len(s.tool_calls):,})</h3>\n")
            for row in _calls_table(s, n):
                write(row)
        write(f"<h3>Diagnostics</h3>\n{_diagnostics(run)}\n</section>\n")
    write(f'</main>\n<footer>Exported by cursor-watch {esc(__version__)}. Links are shown with their URL; '
          "this page loads nothing from anywhere.</footer>\n</div>\n"
          f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
