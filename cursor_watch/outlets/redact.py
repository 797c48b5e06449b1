"""Secrets out of what leaves the machine: exports, the browser view, traces with content.

Agents read ``.env`` files, print tokens and paste keys into commands; their transcripts hold
what they saw. Every outlet that shares a run (``--export`` in every format and the TUI's ``e``
key, ``--serve``, ``--otlp-content``) passes the texts it shows through a :class:`Redactor`,
which replaces each secret it finds with ``[redacted: KIND]`` (``--no-redact`` turns it off).
The TUI on the user's own terminal, ``--plain``, ``--summary`` and ``--save`` are the user's
own and are never redacted.

**What it catches.** Yelp's detect-secrets (>= 1.5) finds the secrets; this module runs its
plugins over a text and replaces what they find:

* every regex plugin: AWS access keys (and AWS secret keys assigned in quotes), GitHub and
  GitLab tokens, Slack tokens and webhooks, Stripe live keys, OpenAI keys (``…T3BlbkFJ…``),
  JSON Web Tokens (formally valid ones, signature included), private key headers, URLs with
  ``user:password@``, Azure storage keys, SendGrid, Twilio, Mailchimp, Square, PyPI, npm
  (``.npmrc``), Telegram and Discord bot tokens, Artifactory, Cloudant, IBM and SoftLayer
  credentials. (Its public-IP plugin is left out: an address is not a credential.)
* its keyword plugin (``password``, ``passwd``, ``pwd``, ``secret``, ``api_key``,
  ``private_key``... assigned with ``=``, ``:``, ``:=``, ``=>``, quoted or not), with its
  filters (``${VAR}``, ``$VAR``, ``{{ x }}``, ``<x>``, ``get_secret()``-style references,
  ids, UUIDs, sequences, values without a letter are kept);
* its base64 high-entropy plugin on quoted strings (``"…"``, ``'…'``; Shannon entropy over
  4.5 bits a character, 20 characters at least).

Where detect-secrets 1.5 has no rule, this module adds its own, each a well-known shape:

* a whole PEM private key (``-----BEGIN … PRIVATE KEY-----`` to its ``END`` line, also inside
  a JSON string where newlines are ``\\n``; without an ``END``, as far as the text looks like
  a key): detect-secrets flags the header line only;
* token formats newer than detect-secrets 1.5: GitHub fine-grained (``github_pat_``),
  Anthropic (``sk-ant-``), OpenAI project, service-account and admin keys (``sk-proj-``,
  ``sk-svcacct-``, ``sk-admin-``), Google API keys (``AIza``), Hugging Face (``hf_``),
  npm (``npm_``), Slack app tokens (``xapp-``), Stripe test keys;
* values assigned to names detect-secrets' keyword list lacks: ``*token``, ``*auth``,
  ``authorization``, ``*credential(s)``, ``cookie``, ``*access_key``, ``*session_key``
  (``GITHUB_TOKEN=…``, ``-H "Authorization: Bearer …"``: the credential after the scheme);
* unquoted high-entropy values after ``=`` or ``:`` (``.env`` files, shell exports), by the
  base64 plugin's own entropy measure and limit.

**What it can't catch.** A secret with no known shape and no secret-sounding name (a bare
password in prose, a key in a variable called ``x``); a hex-only key outside such an
assignment (detect-secrets' hex plugin is left out: it takes every quoted commit id and hash
for a secret); a weak password that is one plain word of one case after ``:`` (``password:
hunter``; after ``=``, as in ``.env`` files, any value is taken); an unquoted value with spaces
(only its first word is taken); a secret split across two texts that are shown apart (two
tool calls). Within one text it can: deltas are joined before anything is redacted (views
redact the assembled segment, never a delta), and a text is scanned line by line, so a
multi-line text is covered line by line (a key block as a whole).

**What it keeps.** Paths, commit ids and hashes (hex), UUIDs (session ids), ``call_id``\\ s,
``tool_use_id``\\ s and other ids in ``*_id`` fields, ordinary prose and code that names a
secret without holding one (``api_key=api_key``, ``secret = settings.SECRET``,
``password: str``, ``password = None``).

**Speed.** A text is scanned whole by the cheap rules (literal prefixes, C-speed substring
checks gate the rest); only the lines that hold a secret-sounding word (``key``, ``pass``,
``secret``, ``token``...) go through the keyword rules, which are slow in Python's ``re``
(~4 MB/s each over arbitrary text). Results are cached per distinct string (oldest
first out, :data:`CACHE_CHARS` characters in all), so a string shown twice is scanned
once. Never raises: a text the rules fail on is replaced whole (``[redacted: unscanned
text]``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

REDACTED = "[redacted: {}]"
CACHE_CHARS = 8 << 20  # characters of texts (and their redactions) kept in the cache
MIN_CHARS = 6  # shorter texts hold no secret any rule can tell (``pwd=x1`` is 6)
MAX_DEPTH = 64  # JSON nesting walked by Redactor.value
SHORT_CHARS = 4096  # a shorter text is first checked for anything a rule needs (most hold none)
MIN_TOKEN = 16  # characters of the shortest token a format rule takes (real ones are 20 to 100+)
LONG_LINE = 4096  # a longer line is scanned by the keyword rules around each keyword, not whole
WINDOW_BEFORE, WINDOW_AFTER = 256, 4096  # ... that far before and after it
UNSCANNED = "[redacted: unscanned text]"
_CLEAN = object()  # in the cache: the text holds no secret

# detect-secrets plugins left out (class names): a public IP address is not a credential
EXCLUDED_PLUGINS = frozenset({"IPPublicDetector", "HexHighEntropyString"})
# plugins whose patterns are slow over arbitrary text (a keyword in front): run on keyword lines only
LINE_PLUGINS = frozenset({"CloudantDetector", "IbmCloudIamDetector", "IbmCosHmacDetector", "SoftlayerDetector"})
# lowercase substrings every keyword-rule match holds: lines without any skip those rules
LINE_NEEDLES = ("key", "pass", "pw", "secret", "token", "auth", "credential", "cookie", "contrase", "cloudant",
                "softlayer")
# plugin class name -> what each match of its patterns holds, checked before the pattern runs
# over a text (speed only: Python's ``re`` is slow on a pattern without a literal start, 5 to
# 30 ms/MB each): lowercase substrings of the text, or a fast pattern (a literal start) that
# each of its matches also matches. A tuple of such gates gives one per pattern (None: none).
GATES: dict[str, Any] = {
    "AWSKeyDetector": (None, ("aws",)),
    "SlackDetector": ("xox", "hooks.slack.com"),
    "StripeDetector": r"k_live_",
    "MailchimpDetector": r"-us[0-9]",
    "ArtifactoryDetector": r"AKC[a-zA-Z0-9]{10}|AP[0-9A-F][a-zA-Z0-9]{8}",
    "TelegramBotTokenDetector": r":(?<=[0-9]{8}:)[0-9A-Za-z_-]{35}",
    "DiscordBotTokenDetector": r"\.(?<=[a-zA-Z0-9_-]{23}\.)[a-zA-Z0-9_-]{6}\.",
    "PrivateKeyDetector": ("private key", "putty-user-key"),
    "GitLabTokenDetector": r"gl[a-z]{1,6}-|GR1348941",
    "PypiTokenDetector": r"pypi-",
}
# kinds found by a more specific rule win an overlap (lower first)
PRIORITY_KEY, PRIORITY_TOKEN, PRIORITY_KEYWORD, PRIORITY_GENERIC, PRIORITY_ENTROPY = 0, 1, 2, 3, 4

KIND_PRIVATE_KEY = "Private Key"
KIND_KEYWORD = "Secret Keyword"
KIND_ENTROPY = "Base64 High Entropy String"
KIND_BEARER = "Authorization Credentials"

_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
# what every rule's match holds but a keyword or a URL's user:password@: a run of token characters
_TOKEN_RUN = re.compile(rf"[A-Za-z0-9_\-+/=]{{{MIN_TOKEN}}}")
# names whose values are ids or names the stream gives (never a secret): kept as they are
PLAIN_NAMES = frozenset({
    "call_id", "parent_call_id", "model_call_id", "session_id", "session", "tool_use_id", "toolCallId", "tool_id",
    "request_id", "requestId", "conversationId", "status", "kind", "tool", "outcome", "type", "subtype", "agent",
    "model", "permission_mode", "permissionMode",
})
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_EDGE = " \t\r\n=:\"'`"

# A PEM (or OpenSSH, PGP, SSH2, PuTTY) private key: its header to its end line, or, without one,
# as far as lines of base64 and "Name: value" headers go. Newlines may be real or JSON's \n.
_NL = r"(?:\r?\n|\\r\\n|\\n)"
_KEY_BLOCK = re.compile(
    r"-{3,5}[ ]?BEGIN[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?[ ]?-{3,5}"
    r"(?:(?:(?!-{3,5}[ ]?BEGIN[ ]).){0,20000}?-{3,5}[ ]?END[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?[ ]?-{3,5}"
    rf"|(?:{_NL}[ \t]*(?:[A-Za-z0-9+/=]{{8,}}|[A-Za-z][A-Za-z-]*:[ ][^\r\n\\]*|(?=\r?\n|\\n)))*)"
    r"|PuTTY-User-Key-File-\d:[^\r\n\\]*"
    rf"(?:{_NL}(?:[A-Za-z][A-Za-z-]*:[ ][^\r\n\\]*|[A-Za-z0-9+/=]{{8,}}))*",
    re.S)

# token formats detect-secrets 1.5 has no plugin for (each provider's documented prefix)
EXTRA_TOKENS = (  # (kind, pattern, gate: a fast pattern each match also matches, or None)
    ("GitHub Token", r"github_pat_[A-Za-z0-9_]{22,255}", None),
    ("Anthropic API Key", r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_\-]{20,}", None),
    ("OpenAI Token", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}", None),
    ("Google API Key", r"AIza[0-9A-Za-z_\-]{35}", None),
    ("Hugging Face Token", r"hf_[A-Za-z]{34}", None),
    ("NPM tokens", r"npm_[A-Za-z0-9]{36}", None),
    ("Slack Token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", None),
    ("Stripe Access Key", r"(?:sk|rk)_test_[0-9a-zA-Z]{24,}", r"k_test_"),
)

# names detect-secrets' keyword list lacks; the value after them is a credential
_NAME_RULE = re.compile(
    r"(?<![A-Za-z0-9])([A-Za-z0-9_.\-]*?(?:token|auth|authorization|credentials?|cookie|access[_\-]?key|"
    r"session[_\-]?key|client[_\-]?secret))[\"'\]]{0,2}[ \t]*(=>|:=|=|:)[ \t]*([\"'`]?)", re.I)
_AUTH_SCHEME = re.compile(r"(?:bearer|basic|token|digest|apikey)[ \t]+([A-Za-z0-9._~+/\-]{8,}=*)", re.I)
# an unquoted high-entropy value after = or :  (a .env line, an export, a YAML value)
_ASSIGNED = re.compile(r"[=:](?<![:=<>!][=:])[ \t]*([A-Za-z0-9+/_\-]{20,}={0,2})(?![A-Za-z0-9+/=_\-])")
# an unquoted value ends at a space, a JSON escape or a closing quote; then trailing punctuation goes
_UNQUOTED_END = re.compile(r"[\s\\\"'`]")
_TRAILING = ",;)]}>."
_PLACEHOLDERS = frozenset({
    "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "empty", "str", "string",
    "bytes", "int", "bool", "any", "optional", "required", "secret", "password", "redacted", "xxx", "xxxx",
    "changeme", "example", "placeholder", "todo", "tbd", "n/a", "***", "...", "…",
})
_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?|[a-z_][a-z0-9_]*\(\)")
_PATH = re.compile(r"(?:~|\.{1,2})?/[^\s]*|[A-Za-z]:\\")


class _Rule:
    """One pattern: its kind, priority, where it runs (``line``: keyword lines only) and its gate."""

    __slots__ = ("kind", "priority", "pattern", "gate", "line", "plugin", "tail")

    def __init__(self, kind: str, priority: int, pattern: re.Pattern, gate: tuple[str, ...] | None = None,
                 line: bool = False, plugin: Any = None, tail: re.Pattern | None = _TOKEN_TAIL) -> None:
        self.kind = kind
        self.priority = priority
        self.pattern = pattern
        self.gate = gate
        self.line = line
        self.plugin = plugin  # confirms a match when the plugin checks more than its pattern (JWT)
        self.tail = tail


Span = tuple[int, int, int, str]  # (start, end, priority, kind)


class Redactor:
    """Finds secrets in texts and replaces each with ``[redacted: KIND]`` (see the module doc).

    One instance is thread-safe (its cache is locked) and keeps its cache across calls:
    :func:`default_redactor` gives the process's one. ``KIND`` is detect-secrets' ``secret_type``
    of the plugin that found it (``AWS Access Key``, ``Secret Keyword``, ``Private Key``...) or
    the name of this module's rule (``Anthropic API Key``, ``Authorization Credentials``...).

    Raises:
        ImportError: detect-secrets is not installed (a core dependency).
    """

    def __init__(self, cache_chars: int = CACHE_CHARS) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        self._heuristic = heuristic
        self.rules: list[_Rule] = [_Rule(KIND_PRIVATE_KEY, PRIORITY_KEY, _KEY_BLOCK, ("private key", "putty-user-key"),
                                         tail=None)]
        for kind, source, gate in EXTRA_TOKENS:
            self.rules.append(_Rule(kind, PRIORITY_TOKEN, re.compile(source), re.compile(gate) if gate else None))
        for kind, cls in get_mapping_from_secret_type_to_class().items():
            name = cls.__name__
            if name in EXCLUDED_PLUGINS or not issubclass(cls, RegexBasedDetector):
                continue
            plugin = cls()
            confirm = plugin if type(plugin).analyze_string is not RegexBasedDetector.analyze_string else None
            line = name in LINE_PLUGINS
            gates = _gates(GATES.get(name) if not line else None, len(cls.denylist))
            for pattern, rule_gate in zip(cls.denylist, gates):
                self.rules.append(_Rule(kind, PRIORITY_GENERIC if line else PRIORITY_TOKEN,
                                        re.compile(pattern.pattern, pattern.flags | re.M), rule_gate, line, confirm,
                                        _JWT_TAIL if name == "JwtTokenDetector" else _TOKEN_TAIL))
        self._text_rules = [r for r in self.rules if not r.line]
        self._line_rules = [r for r in self.rules if r.line]
        # the keyword plugin's patterns, every file type's (quoted and unquoted forms), group of the value
        groups: dict[re.Pattern, int] = {}
        for table in (keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, *keyword.REGEX_BY_FILETYPE.values()):
            groups.update(table)
        self._keyword = list(groups.items())
        self._keyword_name = re.compile(keyword.DENYLIST_REGEX, re.I)
        self._entropy = Base64HighEntropyString()
        # its pattern (a quoted run of its characters), 20 characters at least: fewer matches to look at
        self._quoted = re.compile(r"([\'\"])([%s]{20,})(\1)" % re.escape(self._entropy.charset))
        self._named: dict[str, bool] = {}  # JSON key -> names a secret (a cache)
        # text -> its redaction, or _CLEAN when it holds none (the caller's own object is returned:
        # an equal string from the cache is another object, and callers compare by identity)
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_chars = 0
        self._cache_limit = cache_chars
        self._lock = threading.Lock()

    # -- the public API ------------------------------------------------------------------------

    def __call__(self, text: str) -> str:
        return self.text(text)

    def text(self, text: str) -> str:
        """``text`` with every secret found replaced by ``[redacted: KIND]`` (the same object
        when none is found). Any length, any number of lines; never raises."""
        if text.__class__ is not str:
            text = "" if text is None else str(text)
        n = len(text)
        if n < MIN_CHARS:
            return text
        hit = self._cache.get(text)  # (a dict lookup is atomic: no lock to read)
        if hit is not None:
            return text if hit is _CLEAN else hit
        if n < SHORT_CHARS and not _may_hold_secret(text):
            self._remember(text, text)
            return text
        try:
            out = self.redact_spans(text, self.spans(text))
        except Exception:  # noqa: BLE001 - a rule that fails on some text: nothing of it leaves
            out = UNSCANNED
        self._remember(text, out)
        return out

    def field(self, name: Any, value: Any) -> Any:
        """A value shown under a name (a JSON key, a field label): :meth:`text`, and the whole
        value when the name is secret-sounding (``password``, ``api_key``, ``token``...) and the
        value looks like a secret (one line, no reference, placeholder or plain word).
        A value under one of :data:`PLAIN_NAMES` (an id, a status, a tool name) is never hidden
        whole, only scanned as any text is (a status line holds a rejection's reason); non-string
        values are returned as they are."""
        if not isinstance(value, str):
            return value
        out = self.text(value)
        if name in PLAIN_NAMES:
            return out
        if (out is value and isinstance(name, str) and value and len(value) <= 1000 and "\n" not in value
                and self._named_secret(name) and self._value_ok(value, value, name, quoted=True, assigned=False)):
            return REDACTED.format(KIND_KEYWORD)
        return out

    def value(self, obj: Any) -> Any:
        """A JSON-like value (str, list, tuple, dict; anything else as is) with every string
        redacted, dict values by :meth:`field` (their key is their name). Copies only what
        changes (the same object when nothing does); nesting deeper than :data:`MAX_DEPTH`
        levels is returned as it is.

        Most payloads hold no secret: their strings are first scanned at once, joined by
        newlines (every rule reads a string's lines alone, so a secret of one string is found
        in the joined text and none spans two), and only a payload where something is found,
        or with a secret-sounding key, is walked string by string."""
        if isinstance(obj, str):
            return self.text(obj)
        if not isinstance(obj, (dict, list, tuple)):
            return obj
        strings: list[str] = []
        if not self._collect(obj, strings) and self._clean(strings):
            return obj
        return self._walk(obj, 0)

    def payloads(self, found: Any) -> Any:
        """A :class:`~cursor_watch.formats.common.CallPayloads` with every string in it redacted
        (:meth:`value` of its arguments, result and view; its reasons and extra JSON under their
        labels), the same object when none is: the call's strings are scanned at once first."""
        strings: list[str] = []
        named = False
        for part in (found.args, found.result, found.view):
            if part is not None and self._collect(part, strings):
                named = True
                break
        if not named:
            named = self._collect_pairs(found.reasons, strings) or self._collect_pairs(found.extra, strings)
        if not named and self._clean(strings):
            return found
        from ..formats.common import CallPayloads

        return CallPayloads(self._walk(found.args, 0), self._walk(found.result, 0), self._walk(found.view, 0),
                            found.status, found.outcome, self.pairs(found.reasons), self.pairs(found.extra))

    def _collect_pairs(self, pairs: Iterable[tuple[Any, Any]], strings: list[str]) -> bool:
        for k, v in pairs:
            if v.__class__ is str:
                if k.__class__ is str and k not in PLAIN_NAMES and self._named_secret(k):
                    return True
                strings.append(v)
            elif self._collect(v, strings):
                return True
        return False

    def _clean(self, strings: list[str]) -> bool:
        """True when no rule finds anything in ``strings`` (scanned joined by newlines); they
        are then remembered as clean, so a view that shows one of them again (escaped, cut into
        a section) finds it in the cache."""
        if not strings:
            return True
        if len(strings) > 1:
            strings = list(dict.fromkeys(strings))  # a view repeats its call's arguments and result
        joined = "\n".join(strings)
        if len(joined) < SHORT_CHARS and not _may_hold_secret(joined):
            return True
        try:
            if self.spans(joined):
                return False
        except Exception:  # noqa: BLE001 - the walk replaces what can't be scanned
            return False
        self._remember_clean([x for x in strings if len(x) >= MIN_TOKEN])
        return True

    def _named_secret(self, name: str) -> bool:
        named = self._named
        secret = named.get(name)
        if secret is None:
            secret = self._secret_name(name)
            if len(named) < 4096:
                named[name] = secret
        return secret

    def _collect(self, obj: Any, strings: list[str]) -> bool:
        """Append the strings inside ``obj`` (to :data:`MAX_DEPTH`) to ``strings``; True as soon
        as a dict key that names a secret holds a string (the walk must look at it)."""
        stack = [(obj, 0)]
        add = strings.append
        named = self._named
        while stack:
            v, depth = stack.pop()
            cls = v.__class__
            if cls is str:
                add(v)
            elif depth > MAX_DEPTH:
                continue
            elif cls is dict or isinstance(v, dict):
                for k, x in v.items():
                    if x.__class__ is str:
                        if k.__class__ is str and k not in PLAIN_NAMES:
                            secret = named.get(k)
                            if secret is None:
                                secret = self._named_secret(k)
                            if secret:
                                return True
                        add(x)
                    else:
                        stack.append((x, depth + 1))
            elif cls is list or isinstance(v, (list, tuple)):
                stack.extend((x, depth + 1) for x in v)
        return False

    def _walk(self, obj: Any, _depth: int) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if _depth > MAX_DEPTH:
            return obj
        if isinstance(obj, dict):
            out = {}
            changed = False
            for k, v in obj.items():
                w = self.field(k, v) if isinstance(v, str) else self._walk(v, _depth + 1)
                changed = changed or w is not v
                out[k] = w
            return out if changed else obj
        if isinstance(obj, (list, tuple)):
            items = [self._walk(v, _depth + 1) for v in obj]
            if any(a is not b for a, b in zip(items, obj)):
                return type(obj)(items) if isinstance(obj, list) else tuple(items)
            return obj
        return obj

    def pairs(self, pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """``[(label, value)]`` with each value redacted under its label (:meth:`field`, or
        :meth:`value` for a non-string value)."""
        return [(k, self.field(k, v) if isinstance(v, str) else self.value(v)) for k, v in pairs]

    # -- finding -------------------------------------------------------------------------------

    def spans(self, text: str) -> list[Span]:
        """The secrets in ``text``: ``(start, end, priority, kind)``, sorted, not merged."""
        found: list[Span] = []
        low = text.lower()
        if len(low) != len(text):  # a character whose lower case is longer (İ): ASCII only
            low = text.translate(_ASCII_LOWER)
        gates: dict[int, bool] = {}
        for rule in self._text_rules:
            gate = rule.gate
            if gate is not None:
                open_ = gates.get(id(gate))
                if open_ is None:
                    open_ = gates[id(gate)] = (any(g in low for g in gate) if isinstance(gate, tuple)
                                               else gate.search(text) is not None)
                if not open_:
                    continue
            self._match_rule(rule, text, 0, len(text), found)
        self._entropy_quoted(text, found)
        self._entropy_assigned(text, found)
        for start, end in _keyword_windows(text, low):
            for rule in self._line_rules:
                self._match_rule(rule, text, start, end, found)
            self._keywords(text, start, end, found)
            self._names(text, start, end, found)
        found.sort()
        return found

    def _match_rule(self, rule: _Rule, text: str, start: int, end: int, found: list[Span]) -> None:
        for m in rule.pattern.finditer(text, start, end):
            a, b = m.span()
            if a == b:
                continue
            if rule.plugin is not None and not any(True for _ in rule.plugin.analyze_string(m.group())):
                continue
            if m.re.groups and m.start(1) > a and m.end(1) - m.start(1) >= 4:
                a, b = m.span(1)  # the secret after its context (a URL's password, an assigned key)
            else:
                while a < b and text[a] in _EDGE:
                    a += 1
                while b > a and text[b - 1] in _EDGE:
                    b -= 1
                if rule.tail is not None:
                    b = rule.tail.match(text, b).end()
            if a < b:
                found.append((a, b, rule.priority, rule.kind))

    def _entropy_quoted(self, text: str, found: list[Span]) -> None:
        """detect-secrets' base64 high-entropy plugin: quoted strings over its entropy limit."""
        for m in self._quoted.finditer(text):
            a, b = m.span(2)
            if self._high_entropy(text, a, b):
                found.append((a, b, PRIORITY_ENTROPY, KIND_ENTROPY))

    def _entropy_assigned(self, text: str, found: list[Span]) -> None:
        """The same measure on unquoted values after ``=`` or ``:`` (``.env`` lines, exports)."""
        for m in _ASSIGNED.finditer(text):
            a, b = m.span(1)
            if self._high_entropy(text, a, b):
                found.append((a, b, PRIORITY_ENTROPY, KIND_ENTROPY))

    def _high_entropy(self, text: str, a: int, b: int) -> bool:
        value = text[a:b]
        if value[0] in "/~." and _PATH.match(value):
            return False  # a path (/var/folders/x3/bq9yxrhs4j99…/T/…), not a key
        plugin = self._entropy
        if plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
            return False
        h = self._heuristic
        if h.is_sequential_string(value) or h.is_potential_uuid(value):
            return False
        line = text[text.rfind("\n", 0, a) + 1:b]
        return not h.is_likely_id_string(value, line)

    def _keywords(self, text: str, start: int, end: int, found: list[Span]) -> None:
        """detect-secrets' keyword plugin (every file type's patterns) over one keyword line."""
        line = text[start:end]
        for pattern, group in self._keyword:
            pos = 0
            while pos < len(line):
                m = pattern.search(line, pos)
                if m is None:
                    break
                a, b = m.span(group)
                pos = max(m.start() + 1, b if b > a else m.end())
                if a >= b:
                    continue
                quoted = a > 0 and line[a - 1] in "\"'`"
                b = _value_end(line, a, b, quoted)
                pos = min(pos, b) if b > a else pos
                if b <= a:
                    continue
                value = line[a:b]
                name = self._keyword_name.search(line, m.start(), a)
                assigned = "=" in line[m.start():a] or ":=" in line[m.start():a]
                if self._value_ok(value, line[m.start():], name.group() if name else "", quoted, assigned):
                    found.append((start + a, start + b, PRIORITY_KEYWORD, KIND_KEYWORD))

    def _names(self, text: str, start: int, end: int, found: list[Span]) -> None:
        """Values after the names the keyword plugin lacks (``GITHUB_TOKEN=``, ``Authorization:``)."""
        line = text[start:end]
        for m in _NAME_RULE.finditer(line):
            a = m.end()
            quoted = bool(m.group(3))
            scheme = _AUTH_SCHEME.match(line, a)
            if scheme is not None:  # Authorization: Bearer <credential>
                found.append((start + scheme.start(1), start + scheme.end(1), PRIORITY_KEYWORD, KIND_BEARER))
                continue
            if quoted:
                close = line.find(m.group(3), a)
                b = close if close >= 0 else _value_end(line, a, len(line), False)
            else:
                b = _value_end(line, a, len(line), False)
            if b <= a:
                continue
            value = line[a:b]
            if self._value_ok(value, line[m.start():], m.group(1), quoted, m.group(2) != ":", min_chars=8):
                found.append((start + a, start + b, PRIORITY_KEYWORD, KIND_KEYWORD))

    def _secret_name(self, name: str) -> bool:
        return bool(self._keyword_name.search(name) or _NAME_RULE.match(name + "="))

    def _value_ok(self, value: str, context: str, name: str, quoted: bool, assigned: bool,
                  min_chars: int = 1) -> bool:
        """Whether a value assigned to a secret-sounding name is a secret: detect-secrets'
        heuristic filters, then placeholders, paths, names in code and (after ``:``) plain words."""
        if len(value) < min_chars:
            return False
        h = self._heuristic
        if (h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value) or h.is_not_alphanumeric_string(value)
                or h.is_potential_uuid(value) or h.is_sequential_string(value) or h.is_indirect_reference(context)):
            return False
        if value.lower() in _PLACEHOLDERS or _PATH.match(value):
            return False
        if not quoted and (value.lower() == name.lower() or _CODE_NAME.fullmatch(value)):
            return False  # api_key=api_key, secret = settings.SECRET: a name in code, not a value
        if not assigned and value.isalpha() and (value.islower() or value.isupper() or value.istitle()):
            return False  # "password: required", "apiKeySource": "login"
        return True

    # -- replacing -----------------------------------------------------------------------------

    @staticmethod
    def redact_spans(text: str, spans: list[Span]) -> str:
        """``text`` with ``spans`` (:meth:`spans`) replaced, overlapping ones merged (the merged
        span named by its most specific rule)."""
        if not spans:
            return text
        parts = []
        pos = 0
        cur_a, cur_b, cur_p, cur_k = spans[0]
        for a, b, p, k in spans[1:]:
            if a < cur_b:  # overlaps: one span, the more specific kind
                if p < cur_p:
                    cur_p, cur_k = p, k
                cur_b = max(cur_b, b)
                continue
            parts.append(text[pos:cur_a])
            parts.append(REDACTED.format(cur_k))
            pos = cur_b
            cur_a, cur_b, cur_p, cur_k = a, b, p, k
        parts.append(text[pos:cur_a])
        parts.append(REDACTED.format(cur_k))
        parts.append(text[cur_b:])
        return "".join(parts)

    def _remember_clean(self, texts: list[str]) -> None:
        """Cache each of ``texts`` as holding no secret (one lock for all)."""
        limit = self._cache_limit // 4
        with self._lock:
            cache = self._cache
            for text in texts:
                if len(text) <= limit and text not in cache:
                    cache[text] = _CLEAN
                    self._cache_chars += len(text)
            self._evict()

    def _remember(self, text: str, out: str) -> None:
        """Cache ``text -> out`` (and ``out -> out``: a redacted text shown again is a hit);
        the oldest go first past :data:`CACHE_CHARS` characters."""
        if len(text) < MIN_CHARS or len(text) + len(out) > self._cache_limit // 4:
            return
        with self._lock:
            cache = self._cache
            for key, value in ((text, out), (out, _CLEAN)) if out is not text else ((text, _CLEAN),):
                if key not in cache:
                    cache[key] = value
                    self._cache_chars += len(key) + (len(value) if value is not _CLEAN else 0)
            self._evict()

    def _evict(self) -> None:
        """Drop the oldest entries past :data:`CACHE_CHARS` characters (the lock held)."""
        cache = self._cache
        while self._cache_chars > self._cache_limit and cache:
            old, red = cache.popitem(last=False)
            self._cache_chars -= len(old) + (len(red) if red is not _CLEAN else 0)


def _gates(spec: Any, n: int) -> list[Any]:
    """The gate of each of a plugin's ``n`` patterns from its :data:`GATES` entry (a pattern
    compiled; a per-pattern tuple of another length: no gates, as for a plugin not listed)."""
    if isinstance(spec, str):
        spec = re.compile(spec)
    if isinstance(spec, tuple) and spec and (spec[0] is None or isinstance(spec[0], tuple)):
        if len(spec) != n:
            return [None] * n
        return [re.compile(g) if isinstance(g, str) else g for g in spec]
    return [spec] * n


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _may_hold_secret(text: str) -> bool:
    """False when no rule can match in ``text``: it has no run of :data:`MIN_TOKEN` token
    characters (every token format and high-entropy value is one), no secret-sounding word
    (the keyword rules), no ``://…@`` (a URL's password) and no ``PRIVATE KEY`` header. A quick
    test (microseconds) that spares the rules most short texts: labels, summaries, ids."""
    if _TOKEN_RUN.search(text):
        return True
    if "@" in text and "://" in text:
        return True
    low = text.lower()
    for needle in _HINTS:
        if needle in low:
            return True
    return False


def _value_end(line: str, a: int, b: int, quoted: bool) -> int:
    """Where an assigned value that starts at ``a`` ends (``b``: where its pattern ended it).

    A quoted value ends where its pattern says (at its quote); an unquoted one at a space, a
    backslash (a JSON escape: ``\\n``) or a quote, then trailing ``,;)]}>.`` go."""
    if not quoted:
        m = _UNQUOTED_END.search(line, a, b)
        if m is not None:
            b = m.start()
    while b > a and line[b - 1] in _TRAILING:
        b -= 1
    return b


# what follows a secret-sounding word when a keyword rule can match there: the rest of the
# name, a closing quote or bracket, then an operator (``=``, ``:``, ``(``, ``!=``, ``.assign``),
# a quoted value (``private_key "x";``) or a long token after spaces (``key  abc…``, IBM's form)
_LIVE_AFTER = re.compile(r"[a-z0-9_.\-]*[\"'`\]]{0,2}[ \t]*(?:[=:(!;]|\.assign|\S{0,50}?[ \t]*[\"'`]|"
                         r"[\"']?[a-z0-9_\-]{24})")
_LIVE_BEFORE = re.compile(r"[!=]==?[ \t]*[a-z0-9_]*$")  # 'x' == my_password
_HINTS = (*LINE_NEEDLES, "private key", "putty")
_ALWAYS_LIVE = frozenset({"cloudant", "softlayer"})  # in URLs: https://user:…@acct.cloudant.com


def _keyword_windows(text: str, low: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each line of ``text`` where a keyword rule could match: it holds
    a :data:`LINE_NEEDLES` word followed by an operator (or compared with ``==``); ``low`` is
    ``text`` in lower case, same length. Of a line longer than :data:`LONG_LINE`, windows around
    each such word instead. Sorted, not overlapping."""
    hits: list[tuple[int, int]] = []
    n = len(text)
    after = _LIVE_AFTER.match
    before = _LIVE_BEFORE.search
    for needle in LINE_NEEDLES:
        always = needle in _ALWAYS_LIVE
        i = low.find(needle)
        while i >= 0:
            end = i + len(needle)
            if not (always or after(low, end) or before(low, max(0, i - 64), i)):
                i = low.find(needle, end)
                continue
            ls = text.rfind("\n", 0, i) + 1
            le = text.find("\n", i)
            le = n if le < 0 else le
            if le - ls <= LONG_LINE:
                hits.append((ls, le))
                i = low.find(needle, le)
            else:
                hits.append((max(ls, i - WINDOW_BEFORE), min(le, i + WINDOW_AFTER)))
                i = low.find(needle, end)
    if not hits:
        return []
    hits.sort()
    merged = [hits[0]]
    for a, b in hits[1:]:
        la, lb = merged[-1]
        if a <= lb:
            if b > lb:
                merged[-1] = (la, b)
        else:
            merged.append((a, b))
    return merged


@lru_cache(maxsize=1)
def default_redactor() -> Redactor:
    """The process's :class:`Redactor` (built on first use: importing detect-secrets' plugins
    takes ~0.15 s)."""
    return Redactor()


def redactor_for(redact: bool) -> Redactor | None:
    """:func:`default_redactor` when ``redact``, else None (``--no-redact``)."""
    return default_redactor() if redact else None

