"""A hostile stream of known fake secrets, for the redaction tests.

Every value in :data:`SECRETS` is made up (random characters in each provider's documented
shape); none was ever a credential. The stream is a Cursor stream-json run (shapes from the
real captures in /work/shared/streams/real: shellToolCall success, failure and rejected,
readToolCall, editToolCall, mcpToolCall, webFetchToolCall, thinking and assistant deltas, an
error result) where each place a view shows holds a different secret: the prompt, thinking
and assistant text (each cut in two deltas in the middle of the secret), a command and its
output (a ``.env`` printed), a private key read from a file, a diff, an MCP call's JSON
arguments under secret-sounding keys, a URL's query and password, a rejection's reason, a
line that is not JSON (a diagnostic) and the result's text.

:func:`leaks` finds any secret, or a 12-character piece of one, in an output.
"""

from __future__ import annotations

import html
import re

import orjson

SID = "7d1c9a52-3e4b-4f60-8a71-2b9c0d1e5f34"  # a UUID session id: kept

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmYWtlLXVzZXItNDgyMSIsImV4cCI6MTg5MzQ1NjAwMH0."
       "WbBN8fGeN2mpzOxT8nmT1Tyu6jjZiqfwjC253_94h_K")
AWS_KEY_ID = "AKIAKD0Y3B4O1WEIHFOL"
AWS_SECRET = "rCsVAv5VMU//6725WToH1OdDcwHoHehueIwOkm0t"
GITHUB_CLASSIC = "ghp_Ixir9fLfSKn9JT3O51keeN6buTkGZoqeTfSh"
GITHUB_FINE = "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"
SLACK = "xoxb-118901701131-7269426581014-U7GI0ImleGygUCeNP7WoylYY"
STRIPE = "sk_live_9iGmsE4BSme35Dzitpw6lkBW"
OPENAI = "sk-proj-eP-DARI25UhAS8gcooYHscT12GOei3_7FfIXb2biQBjgane-"
ANTHROPIC = "sk-ant-api03-epmInZ-3queHcW2gVso8RHceH4JS2hmnvCOeqLsRJJ3_p6ATdr1dDSKpZTOcnie3-zsdvd7VLDKfCd40"
GOOGLE = "AIza38lR-2I4QKJCXdRvHgYARbjlno8Tl_k9EUI"
NPM = "npm_X5l16vmikkIoQBu8onWQKTXeqhuy0BQEO9FK"
HUGGING_FACE = "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"
DB_PASSWORD = "ob0OjN3AVkFZ"  # a short password in a .env line
SECRET_KEY = "3z6HdjmB7EyGjBMa"  # SECRET_KEY=… in a .env line
BEARER = "VVP7EzrQVWSlxMkNd2ZUWInoRcjg2x6K"  # an opaque token after Authorization: Bearer
URL_PASSWORD = "pnV1n0E7jzCsh8YWFBpA5gossPKfmy9zxqilnesc"  # https://user:PASSWORD@host
PG_PASSWORD = "Vq9xL2mZr7Tf"  # postgres://user:PASSWORD@host
MCP_PASSWORD = "Tq7!vR2#kL9$wX4p"  # a JSON value under "password"
MCP_API_KEY = "d73jJsTsNBFm6yDQ7Rty8QP39VqpUKhG"  # a JSON value under "api_key"
ENTROPY = "nvfoXmnVxQaBsemRtPy7ATxLM1vn4klwAU5o9sJieyfVnfV"  # an unnamed high-entropy value after =
KEY_LINES = (
    "yDQQqjzJi9toBTOjWr56ZwszQPiYlyx+SCFuGU+ezlcUxfpsohfENLuaLfEJ0sOV",
    "wM3jNErVS/FrZX2HWemgAiOQDxiodF184KRVkakMPxdMdJJMyImGoVD+SieQZ4jW",
    "budZ8OjRywTZxRQlADOZqcv5BUXOaKtWXVckaFi9PIMU4uS3rq2t/3P+qHx0bZdI",
    "0rrK+I4wejv4a0yuqtURnLCAI4xJMXHPbviWJJ3R8VZLW2MtA7SCCAUDhxNhw90P",
)
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_LINES) + "\n-----END RSA PRIVATE KEY-----\n"

SECRETS = (JWT, AWS_KEY_ID, AWS_SECRET, GITHUB_CLASSIC, GITHUB_FINE, SLACK, STRIPE, OPENAI, ANTHROPIC, GOOGLE, NPM,
           HUGGING_FACE, DB_PASSWORD, SECRET_KEY, BEARER, URL_PASSWORD, PG_PASSWORD, MCP_PASSWORD, MCP_API_KEY, ENTROPY,
           *KEY_LINES)

# what a view of the run shows besides: none of it may be redacted
ENV_FILE = (f"DATABASE_URL=postgres://shop:{PG_PASSWORD}@db.internal:5432/prod\n"
            f"DB_PASSWORD={DB_PASSWORD}\n"
            f"SECRET_KEY={SECRET_KEY}\n"
            f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}\n"
            f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n"
            f"SLACK_BOT_TOKEN={SLACK}\n"
            f"CACHE_SALT={ENTROPY}\n"
            "DEBUG=false\n")
COMMAND = (f"export GITHUB_TOKEN={GITHUB_FINE} && curl -s -H \"Authorization: Bearer {BEARER}\" "
           "https://api.example.com/v1/deploy")
REJECTED_COMMAND = f"npm config set //registry.npmjs.org/:_authToken={NPM}"
REJECTION = f"Never put a token in the shell history. Use the one in the keychain, not {HUGGING_FACE}."
DIFF = f'--- a/settings.py\n+++ b/settings.py\n@@ -1,2 +1,2 @@\n-OPENAI_API_KEY = None\n+OPENAI_API_KEY = "{OPENAI}"\n'


def _ev(**kw) -> bytes:
    kw.setdefault("session_id", SID)
    return orjson.dumps(kw) + b"\n"


def _halves(text: str, secret: str) -> tuple[str, str]:
    """``text`` cut in two in the middle of ``secret`` (two deltas: neither holds it whole)."""
    at = text.index(secret) + len(secret) // 2
    return text[:at], text[at:]


def _call(call_id: str, kind: str, args: dict, outcome: dict, ts: int) -> bytes:
    return (_ev(type="tool_call", subtype="started", call_id=call_id, timestamp_ms=ts,
                tool_call={kind: {"args": args}})
            + _ev(type="tool_call", subtype="completed", call_id=call_id, timestamp_ms=ts + 50,
                  tool_call={kind: {"args": args, "result": outcome}}))


def secret_stream() -> bytes:
    """The run (bytes of NDJSON); see the module doc for where each secret is."""
    t0 = 1_790_000_000_000
    thinking = f"The .env holds STRIPE_KEY={STRIPE}; I must not print it."
    said = f"I'll call the API with the Anthropic key {ANTHROPIC} as you asked."
    mcp_args = {"name": "vault-login", "args": {"user": "deploy", "password": MCP_PASSWORD, "api_key": MCP_API_KEY},
                "toolCallId": "mcp-1", "providerIdentifier": "vault", "toolName": "login"}
    url = f"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={GOOGLE}"
    lines = [
        _ev(type="system", subtype="init", model="Composer 2.5", cwd="/home/dev/shop", apiKeySource="login",
            permissionMode="default"),
        _ev(type="user", message={"role": "user", "content": [{"type": "text", "text": (
            f"Deploy the shop. Push with my token {GITHUB_CLASSIC}; the JWT for staging is {JWT}")}]}),
        *[_ev(type="thinking", subtype="delta", text=part, timestamp_ms=t0 + 1 + n)
          for n, part in enumerate(_halves(thinking, STRIPE))],
        _ev(type="thinking", subtype="completed", timestamp_ms=t0 + 3),
        *[_ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": part}]},
              timestamp_ms=t0 + 4 + n)  # deltas (--stream-partial-output), then the flush before a tool call
          for n, part in enumerate(_halves(said, ANTHROPIC))],
        _ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": said}]},
            timestamp_ms=t0 + 6, model_call_id="m1"),
        _call("call-env", "shellToolCall", {"command": "cat .env"},
              {"success": {"command": "cat .env", "exitCode": 0, "stdout": ENV_FILE, "stderr": ""}}, t0 + 10),
        _call("call-deploy", "shellToolCall", {"command": COMMAND},
              {"success": {"command": COMMAND, "exitCode": 0, "stdout": '{"deployed": true}\n', "stderr": ""}},
              t0 + 100),
        _call("call-key", "readToolCall", {"path": "/home/dev/.ssh/id_rsa"},
              {"success": {"content": PRIVATE_KEY, "totalLines": 6}}, t0 + 200),
        _call("call-edit", "editToolCall", {"path": "/home/dev/shop/settings.py"},
              {"success": {"path": "/home/dev/shop/settings.py", "diffString": DIFF}}, t0 + 300),
        _call("call-push", "shellToolCall", {"command": "git push origin main"},
              {"failure": {"command": "git push origin main", "exitCode": 128, "stdout": "",
                           "stderr": f"fatal: Authentication failed for "
                                     f"'https://deploy:{URL_PASSWORD}@git.example.com/shop.git/'\n"}}, t0 + 400),
        _call("call-npm", "shellToolCall", {"command": REJECTED_COMMAND},
              {"rejected": {"command": REJECTED_COMMAND, "workingDirectory": "/home/dev/shop", "reason": REJECTION,
                            "isReadonly": False}}, t0 + 500),
        _call("mcp-1", "mcpToolCall", mcp_args,
              {"success": {"content": [{"text": {"text": '{"ok": true, "session": "s-41"}'}}], "isError": False}},
              t0 + 600),
        _call("call-fetch", "webFetchToolCall", {"url": url},
              {"success": {"url": url, "markdown": "# Berlin\n52.52, 13.40"}}, t0 + 700),
        f"RetriableError: [unauthenticated] bad credentials, token={GITHUB_CLASSIC}\n".encode(),
        _ev(type="result", subtype="error", is_error=True, duration_ms=800, request_id="r-1",
            result=f"Deploy failed: the staging JWT {JWT} has expired."),
    ]
    return b"".join(lines)


def _pieces(secret: str, size: int = 12) -> list[str]:
    if len(secret) <= size:
        return [secret]
    return [secret[i:i + size] for i in range(0, len(secret) - size + 1, 4)] + [secret[-size:]]


_BACKSLASH_BEFORE = re.compile(r"\\(?=[^A-Za-z0-9\\])|\\\\")


def normalized(text: str) -> str:
    """An output as its reader gets it back: HTML entities decoded, Markdown's and JSON's
    backslash escapes of punctuation (``\\_``, ``\\/``, ``\\\\``) removed."""
    return _BACKSLASH_BEFORE.sub("", html.unescape(text))


def leaks(output: str | bytes) -> list[str]:
    """The secrets of :data:`SECRETS` of which ``output`` holds the whole or a 12-character
    piece (after :func:`normalized`), in :data:`SECRETS` order."""
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    text = normalized(output)
    return [s for s in SECRETS if any(p in text for p in _pieces(s))]
