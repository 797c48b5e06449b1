"""Finished records kept on disk, so memory stays flat however long a stream runs.

A session that streams for hours accumulates tool calls, assistant segments,
thinking blocks, notes and timeline entries without end. The model keeps the
newest ``hot`` records of each kind in memory (what the views show and the
reducer still changes) and moves older, final ones in batches to a private
temporary SQLite database (stdlib ``sqlite3``). Reading an old record loads it
back; the lists and the call table behave like a ``list`` and a ``dict``.

The database is SQLite's anonymous temporary file (``sqlite3.connect("")``):
created with mode 0600 and removed by SQLite itself when the connection closes,
so a crash leaves nothing behind. Its page cache is capped (``CACHE_KIB``).

Failure is never fatal: when the database can't be created or written (no
temporary directory, a full disk), records simply stay in memory and
:attr:`SpillFile.error` says why (the session shows it once as a note).
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

HOT_RECORDS = 1_000  # records of each kind kept in memory (the newest)
SPILL_BATCH = 250  # records moved to disk at a time
CACHE_KIB = 1_024  # SQLite page cache, KiB
PAGE_ROWS = 1_000  # rows fetched per query when iterating
KEY_FILTER_BITS = 1 << 24  # 2 MiB filter of hash(key) for keys on disk, two bits a key (see SpillDict)
KEY_SCANS = 8  # lookups by key on disk answered by a scan of the table before it gets an index
BLOB_CACHE = 4  # spilled call batches kept decoded after a read (SpillDict)


class SpillFile:
    """The temporary database shared by a session's lists and its call table.

    Opened on first use (short streams never create it). Records are stored as
    ``pickle`` of plain tuples built by the owner's ``encode`` function; the file
    is private to this process and never read from elsewhere.

    Attributes:
        error: why spilling stopped (``""`` while it works); once set, every list
            keeps its records in memory.
        reported: the owner has shown :attr:`error` to the user.
    """

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self.error = ""
        self.reported = False

    @property
    def open(self) -> bool:
        """True once the database exists (something was spilled)."""
        return self._db is not None

    def db(self) -> sqlite3.Connection | None:
        """The connection, created on first call; None after an error."""
        if self.error:
            return None
        if self._db is None:
            try:
                db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
                for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}", "temp_store=FILE"):
                    db.execute(f"PRAGMA {pragma}")
                db.execute("CREATE TABLE items (list TEXT, idx INTEGER, data BLOB, PRIMARY KEY (list, idx)) WITHOUT ROWID")
                # a SpillDict's records: one pickle per spilled batch (call_blobs) and one small
                # row per record (calls: its position, hash(key) and place in a batch). Keyed
                # by hash(call_id) (an int index is cheaper to keep than one on long strings);
                # a lookup checks the call_id of each record it finds. The index on key_hash
                # is made when lookups by key come often (SpillDict.get): until then a row
                # costs an append to the table alone
                db.execute("CREATE TABLE call_blobs (id INTEGER PRIMARY KEY, data BLOB)")
                db.execute("CREATE TABLE calls (idx INTEGER PRIMARY KEY, key_hash INTEGER, blob INTEGER, slot INTEGER)")
            except sqlite3.Error as err:
                self.fail(err)
                return None
            self._db = db
        return self._db

    def fail(self, err: BaseException) -> None:
        """Stop spilling (records stay in memory from now on)."""
        if not self.error:
            self.error = f"keeping old records in memory: temporary file failed ({err})"

    def write(self, sql: str, rows: list[tuple]) -> bool:
        """``executemany`` in one transaction; False (and :attr:`error` set) on failure."""
        return self.write_all([(sql, rows)])

    def write_all(self, statements: list[tuple[str, list[tuple]]]) -> bool:
        """Several ``executemany`` in one transaction; False (and :attr:`error` set) on failure."""
        db = self.db()
        if db is None:
            return False
        try:
            db.execute("BEGIN")
            for sql, rows in statements:
                db.executemany(sql, rows)
            db.execute("COMMIT")
        except sqlite3.Error as err:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self.fail(err)
            return False
        return True

    def execute(self, sql: str) -> bool:
        """One statement outside a transaction (``CREATE INDEX``); False (and :attr:`error` set)
        on failure, or when there is no database."""
        db = self._db
        if db is None:
            return False
        try:
            db.execute(sql)
        except sqlite3.Error as err:
            self.fail(err)
            return False
        return True

    def query(self, sql: str, args: tuple) -> list[tuple]:
        """Rows of a SELECT ([] when there is no database)."""
        db = self._db
        if db is None:
            return []
        return db.execute(sql, args).fetchall()

    def close(self) -> None:
        """Close (and so delete) the database."""
        if self._db is not None:
            self._db.close()
            self._db = None


def dump(state: tuple) -> bytes:
    """A record's state tuple as bytes (pickle: handles any str, int size, None)."""
    return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


class SpillList(Generic[T]):
    """An append-only list whose oldest items live in a :class:`SpillFile`.

    Only items that will never change again may be spilled; the model guarantees
    that for every list it keeps (only the last segment or thinking block can be
    open, and it is always within the hot tail).

    Supports ``len``, ``[i]`` and ``[a:b]`` (negative too), iteration in order,
    ``append`` and ``==`` with a list. Items read from disk are copies (read-only).

    Args:
        spill: the database; name: the list's key in it;
        encode: item -> state tuple; decode: state tuple -> item;
        hot: items kept in memory (at least this many, at most ``hot + batch``).
    """

    def __init__(self, spill: SpillFile, name: str, encode: Callable[[T], tuple], decode: Callable[[tuple], T],
                 hot: int = HOT_RECORDS, batch: int = SPILL_BATCH) -> None:
        self._spill = spill
        self._name = name
        self._encode = encode
        self._decode = decode
        self._hot_max = max(1, hot)  # the last item may still be open: it always stays
        self._batch = max(1, batch)
        self._full = self._hot_max + self._batch  # items in memory when the oldest batch moves
        self._cold = 0  # items [0, _cold) are on disk, in rows of ``batch`` items
        self._items: list[T] = []
        self._cache: tuple[int, list[T]] | None = None  # the last batch read back

    def __len__(self) -> int:
        return self._cold + len(self._items)

    def __bool__(self) -> bool:
        return bool(self._cold or self._items)

    def append(self, item: T) -> None:
        """Add ``item``; moves the oldest batch to disk when the hot tail is full."""
        items = self._items
        items.append(item)
        if len(items) >= self._full and not self._spill.error:
            n = self._batch
            # one row per batch: one pickle of n states is ~5x cheaper than n rows
            row = (self._name, self._cold, dump(tuple(map(self._encode, items[:n]))))
            if self._spill.write("INSERT INTO items VALUES (?, ?, ?)", [row]):
                del items[:n]
                self._cold += n

    def _batch_at(self, start: int) -> list[T]:
        """The spilled batch that begins at ``start`` (a multiple of the batch size)."""
        cached = self._cache
        if cached is not None and cached[0] == start:
            return cached[1]
        batch = [self._decode(state) for state in self._states_at(start)]
        self._cache = (start, batch)
        return batch

    def _states_at(self, start: int) -> tuple:
        """The state tuples of the spilled batch that begins at ``start`` (read from disk)."""
        rows = self._spill.query("SELECT data FROM items WHERE list = ? AND idx = ?", (self._name, start))
        return pickle.loads(rows[0][0]) if rows else ()

    def _load(self, start: int, stop: int) -> list[T]:
        out: list[T] = []
        n = self._batch
        first = start - start % n
        for b in range(first, stop, n):
            batch = self._batch_at(b)
            out.extend(batch[max(0, start - b) : stop - b])
        return out

    def __getitem__(self, index: int | slice) -> Any:
        n = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            if stop <= start:
                return []
            cold = self._cold
            out = self._load(start, min(stop, cold)) if start < cold else []
            return out + self._items[max(0, start - cold) : max(0, stop - cold)]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"{self._name} index out of range")
        if index >= self._cold:
            return self._items[index - self._cold]
        return self._load(index, index + 1)[0]

    def __reversed__(self) -> Iterator[T]:
        """Newest first (``reversed()``: a compiled class is not a sequence by its ``[i]`` alone)."""
        for i in range(len(self) - 1, -1, -1):
            yield self[i]

    def __iter__(self) -> Iterator[T]:
        for start in range(0, self._cold, self._batch):  # batch by batch: memory stays bounded
            yield from self._batch_at(start)
        yield from list(self._items)

    def project(self, index: int, of_item: Callable[[T], Any]) -> Iterator[Any]:
        """One field of every item, in order: ``of_item(item)`` of the items in memory, and
        ``state[index]`` of the spilled ones' state tuples, read without making the items
        (``of_item`` must give that field: ``Segment.text`` is its state's ``[4]``)."""
        for start in range(0, self._cold, self._batch):  # batch by batch: memory stays bounded
            cached = self._cache
            if cached is not None and cached[0] == start:
                yield from map(of_item, cached[1])
                continue
            for state in self._states_at(start):
                yield state[index]
        yield from map(of_item, list(self._items))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, SpillList)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SpillList({self._name}: {self._cold} on disk, {len(self._items)} in memory)"


class SpillDict(Generic[T]):
    """``key -> item`` in order of insertion, whose old, final items live on disk.

    Made for tool calls (``call_id -> ToolCall``): the newest ``hot`` items stay in
    memory and so does every item that is not ``final`` (a running call), however
    old. Behaves like a ``dict`` for ``len``, ``in``, ``[key]``, ``get``, ``keys``,
    ``values``, ``items`` and iteration (keys, in insertion order), plus
    :meth:`at` (by 1-based position) and :meth:`hot_values`.

    Reading an item from disk returns a copy; the owner calls :meth:`revive` to
    get an item it is going to change (it is kept in memory again and written
    back when it is spilled the next time).

    Args:
        spill: the database; encode/decode: item <-> state tuple;
        key_of: the item's key (str); position_of: its 1-based insertion position;
        final: True when the item will not change any more (may be spilled);
        hot, batch: as for :class:`SpillList`.
    """

    def __init__(self, spill: SpillFile, encode: Callable[[T], tuple], decode: Callable[[tuple], T],
                 key_of: Callable[[T], str], position_of: Callable[[T], int], final: Callable[[T], bool],
                 hot: int = HOT_RECORDS, batch: int = SPILL_BATCH) -> None:
        self._spill = spill
        self._encode = encode
        self._decode = decode
        self._key_of = key_of
        self._position_of = position_of
        self._final = final
        self._hot_max = hot
        self._batch = max(1, batch)
        self._by_key: dict[str, T] = {}
        self._by_position: dict[int, T] = {}
        self._revived: set[str] = set()  # keys read back from disk and kept in memory again
        self._count = 0
        self._spilled = 0  # items written to disk at least once
        self._next_try = hot + self._batch
        # two bits per hash(key) of the keys on disk (a Bloom filter): a clear one means "not
        # on disk", so a new key (every new tool call) costs no query; a fixed 2 MiB, made at
        # the first spill. 40,000 keys on disk make one new key in 40,000 look as if it were
        # there (one in 20 at a million)
        self._on_disk: bytearray | None = None
        self._scans = 0  # lookups by key answered without the index (see get)
        self._blobs = 0  # batches written (their ids are 1..n)
        self._blob_cache: dict[int, tuple] = {}  # a few batches read back, by id

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def add(self, item: T) -> None:
        """Insert a new item (its key must not be present; its position is ``len + 1``)."""
        self._count += 1
        self._by_key[self._key_of(item)] = item
        self._by_position[self._position_of(item)] = item
        if self._count >= self._next_try:
            self._next_try = self._count + self._batch
            self._spill_old()

    def _spill_old(self) -> None:
        if self._spill.error:
            return
        limit = self._count - self._hot_max
        position_of, final = self._position_of, self._final
        # _by_key holds the items in order of position, except revived ones (re-inserted at
        # the end when read back): look at the oldest ones up to the limit, then the revived
        old = []
        revived = self._revived
        for x in self._by_key.values():
            if position_of(x) > limit:
                break
            if final(x) and not (revived and self._key_of(x) in revived):
                old.append(x)
        for key in list(revived):
            y = self._by_key.get(key)
            if y is None:
                revived.discard(key)
            elif position_of(y) <= limit and final(y):
                old.append(y)
                revived.discard(key)
        if not old:
            return
        # one pickle for the batch (a row per record cost 5x more); a revived record written
        # again gets a new place, and its row in ``calls`` points there
        blob = self._blobs + 1
        encode, key_of = self._encode, self._key_of
        data = dump(tuple(map(encode, old)))
        rows = [(position_of(x), hash(key_of(x)), blob, slot) for slot, x in enumerate(old)]
        if self._spill.write_all([("INSERT INTO call_blobs VALUES (?, ?)", [(blob, data)]),
                                  ("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?)", rows)]):
            self._blobs = blob
            if self._on_disk is None:
                self._on_disk = bytearray(KEY_FILTER_BITS // 8)
            bits = self._on_disk
            for x in old:
                key = self._key_of(x)
                h = hash(key)
                a, b = h % KEY_FILTER_BITS, (h >> 24) % KEY_FILTER_BITS
                bits[a >> 3] |= 1 << (a & 7)
                bits[b >> 3] |= 1 << (b & 7)
                del self._by_key[key]
                del self._by_position[position_of(x)]
            self._spilled += len(old)

    def _maybe_on_disk(self, key: str) -> bool:
        bits = self._on_disk
        if bits is None:
            return False
        h = hash(key)
        a, b = h % KEY_FILTER_BITS, (h >> 24) % KEY_FILTER_BITS
        return bool(bits[a >> 3] & (1 << (a & 7))) and bool(bits[b >> 3] & (1 << (b & 7)))

    def peek(self, key: str) -> T | None:
        """The item if it is in memory (never reads the disk)."""
        return self._by_key.get(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The item for ``key`` (a copy when it is read from disk), else ``default``."""
        item = self._by_key.get(key)
        if item is not None:
            return item
        if self._maybe_on_disk(key):
            # the first few lookups scan the table (a filter's false positive is rare, and a
            # spilled call is final: rarely asked for again); more of them get an index
            self._scans += 1
            if self._scans == KEY_SCANS:
                self._spill.execute("CREATE INDEX IF NOT EXISTS calls_by_key ON calls (key_hash)")
            for blob, slot in self._spill.query("SELECT blob, slot FROM calls WHERE key_hash = ?", (hash(key),)):
                item = self._decode(self._state(blob, slot))
                if self._key_of(item) == key:
                    return item
        return default

    def _state(self, blob: int, slot: int) -> tuple:
        """The state tuple at ``slot`` of spilled batch ``blob`` (the last few batches read
        are kept: reading in order touches each batch once)."""
        cache = self._blob_cache
        states = cache.get(blob)
        if states is None:
            rows = self._spill.query("SELECT data FROM call_blobs WHERE id = ?", (blob,))
            states = pickle.loads(rows[0][0]) if rows else ()  # the batch's tuple of state tuples
            if len(cache) >= BLOB_CACHE:
                del cache[next(iter(cache))]
            cache[blob] = states
        return states[slot]

    def revive(self, key: str) -> T | None:
        """The item for ``key``, kept in memory from now on (for changing it)."""
        item = self._by_key.get(key)
        if item is None and self._maybe_on_disk(key):
            item = self.get(key)
            if item is not None:
                self._by_key[key] = item
                self._by_position[self._position_of(item)] = item
                self._revived.add(key)
        return item

    def __getitem__(self, key: str) -> T:
        item = self.get(key)
        if item is None:
            raise KeyError(key)
        return item

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def at(self, position: int) -> T | None:
        """The item at 1-based ``position`` (insertion order), or None."""
        item = self._by_position.get(position)
        if item is None and self._spilled and 1 <= position <= self._count:
            rows = self._spill.query("SELECT blob, slot FROM calls WHERE idx = ?", (position,))
            if rows:
                return self._decode(self._state(*rows[0]))
        return item

    def at_range(self, start: int, stop: int) -> dict[int, T]:
        """The items at 1-based positions ``[start, stop)`` by position (one query for the
        ones on disk: a page of table rows)."""
        out: dict[int, T] = {}
        missing = False
        for position in range(max(1, start), min(stop, self._count + 1)):
            item = self._by_position.get(position)
            if item is None:
                missing = True
            else:
                out[position] = item
        if missing and self._spilled:
            rows = self._spill.query("SELECT idx, blob, slot FROM calls WHERE idx >= ? AND idx < ?", (start, stop))
            for position, blob, slot in rows:
                if position not in out:
                    out[position] = self._decode(self._state(blob, slot))
        return out

    def hot_values(self) -> list[T]:
        """The items in memory (every item that is not final among them)."""
        return list(self._by_key.values())

    def values(self, start: int = 1) -> Iterator[T]:
        """Every item in insertion order from 1-based position ``start`` (disk pages merged
        with memory; memory wins)."""
        hot = self._by_position
        if not self._spilled:
            items = list(hot.values())  # added in position order, never revived
            yield from items[max(0, start - 1):] if start > 1 else items
            return
        position = max(1, start)
        while position <= self._count:
            stop = position + PAGE_ROWS
            rows = {p: (blob, slot) for p, blob, slot in
                    self._spill.query("SELECT idx, blob, slot FROM calls WHERE idx >= ? AND idx < ?", (position, stop))}
            for p in range(position, min(stop, self._count + 1)):
                item = hot.get(p)
                if item is None and p in rows:
                    item = self._decode(self._state(*rows[p]))
                if item is not None:
                    yield item
            position = stop

    def keys(self) -> Iterator[str]:
        """Keys in insertion order."""
        return (self._key_of(x) for x in self.values())

    def __iter__(self) -> Iterator[str]:
        """Keys in insertion order (as a dict's)."""
        return (self._key_of(x) for x in self.values())

    def items(self) -> Iterator[tuple[str, T]]:
        """``(key, item)`` in insertion order."""
        return ((self._key_of(x), x) for x in self.values())

    def __repr__(self) -> str:
        return f"SpillDict({self._count} items, {len(self._by_key)} in memory)"
