"""Mutants of a Parquet file, for parquet_mutations.py (stdlib only).

A mutant is the file's bytes with one change: a byte set to another value, a bit flipped,
the file cut short, bytes inserted or deleted, or an integer field of the Thrift structures
(a page header or the footer) rewritten, such as a page's `compressed_page_size`, a list's
element count or a string's length. The integer fields are found by walking the Thrift
compact encoding of every page header and of the footer (`thrift_ints`), so that length
changes hit lengths, not random bytes.

Every mutant is a function of (file bytes, its page-header offsets, an RNG): the same seed
gives the same mutant.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass

MAGIC = b"PAR1"

# Thrift compact protocol type ids.
T_TRUE, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY = 1, 2, 3, 4, 5, 6, 7, 8
T_LIST, T_SET, T_MAP, T_STRUCT = 9, 10, 11, 12

# How often each kind of mutation is drawn.
KINDS = {
    "byte": 22,
    "bit": 18,
    "thrift_int": 30,
    "truncate": 7,
    "delete": 8,
    "insert": 8,
    "footer_len": 4,
    "swap": 3,
}


@dataclass(frozen=True)
class IntField:
    """An integer written in a Thrift structure: a zigzag varint (i16/i32/i64), an unsigned
    varint (a string's length, a list's or map's size), or a list size held in the high
    nibble of the list's header byte."""

    offset: int  # first byte of the varint (or the list header byte)
    width: int  # bytes it takes
    kind: str  # "zigzag", "length" or "nibble"
    value: int
    where: str  # "footer" or "page"


class ThriftError(Exception):
    pass


class _Reader:
    def __init__(self, buf: bytes, pos: int, end: int, where: str):
        self.buf, self.pos, self.end, self.where = buf, pos, end, where
        self.ints: list[IntField] = []

    def byte(self) -> int:
        if self.pos >= self.end:
            raise ThriftError("end of data")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> tuple[int, int, int]:
        start, v, shift = self.pos, 0, 0
        while True:
            b = self.byte()
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return start, self.pos - start, v
            if shift > 63:
                raise ThriftError("varint too long")

    def value(self, ty: int, depth: int) -> None:
        if depth > 32:
            raise ThriftError("too deep")
        if ty in (T_TRUE, T_FALSE):
            return
        if ty == T_BYTE:
            self.byte()
        elif ty in (T_I16, T_I32, T_I64):
            start, width, v = self.varint()
            self.ints.append(IntField(start, width, "zigzag", (v >> 1) ^ -(v & 1), self.where))
        elif ty == T_DOUBLE:
            self.skip(8)
        elif ty == T_BINARY:
            start, width, n = self.varint()
            self.ints.append(IntField(start, width, "length", n, self.where))
            self.skip(n)
        elif ty in (T_LIST, T_SET):
            head_at = self.pos
            head = self.byte()
            n, elem = head >> 4, head & 0x0F
            if n == 15:
                start, width, n = self.varint()
                self.ints.append(IntField(start, width, "length", n, self.where))
            else:
                self.ints.append(IntField(head_at, 1, "nibble", n, self.where))
            for _ in range(n):
                if elem in (T_TRUE, T_FALSE):
                    self.byte()
                else:
                    self.value(elem, depth + 1)
        elif ty == T_MAP:
            start, width, n = self.varint()
            self.ints.append(IntField(start, width, "length", n, self.where))
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.value(kv >> 4, depth + 1)
                    self.value(kv & 0x0F, depth + 1)
        elif ty == T_STRUCT:
            self.struct(depth + 1)
        else:
            raise ThriftError(f"unknown type {ty}")

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > self.end:
            raise ThriftError("runs past the end")
        self.pos += n

    def struct(self, depth: int = 0) -> dict[int, object]:
        """Reads a struct; returns the integer values of its top-level integer fields."""
        last, fields = 0, {}
        while True:
            head = self.byte()
            if head == 0:
                return fields
            delta, ty = head >> 4, head & 0x0F
            if delta:
                fid = last + delta
            else:
                _, _, z = self.varint()
                fid = (z >> 1) ^ -(z & 1)
            last = fid
            before = len(self.ints)
            self.value(ty, depth)
            if ty in (T_I16, T_I32, T_I64) and len(self.ints) > before:
                fields[fid] = self.ints[before].value


def footer_range(data: bytes) -> tuple[int, int] | None:
    """(start, end) of the Thrift FileMetaData, or None when the file's tail is not sound."""
    if len(data) < 12 or data[-4:] != MAGIC:
        return None
    (n,) = struct.unpack("<i", data[-8:-4])
    start = len(data) - 8 - n
    if n <= 0 or start < 4:
        return None
    return start, len(data) - 8


def footer_ints(data: bytes) -> list[IntField]:
    span = footer_range(data)
    if span is None:
        return []
    r = _Reader(data, span[0], span[1], "footer")
    try:
        r.struct()
    except ThriftError:
        pass
    return r.ints


def page_ints(data: bytes, chunks: list[tuple[int, int]]) -> list[IntField]:
    """The integer fields of every page header of the column chunks `chunks` ((start,
    stored length) each), walked from header to header by `compressed_page_size` (field 3)."""
    found: list[IntField] = []
    for start, length in chunks:
        pos, end = start, start + length
        while pos < end:
            r = _Reader(data, pos, end, "page")
            try:
                fields = r.struct()
            except ThriftError:
                break
            found.extend(r.ints)
            size = fields.get(3)
            if not isinstance(size, int) or size < 0:
                break
            pos = r.pos + size
    return found


def _varint(v: int, width: int | None = None) -> bytes:
    """`v` (unsigned) as a varint, padded with continuation bytes to `width` bytes when it
    fits in them (readers take a padded varint as its value)."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v == 0 and (width is None or len(out) + 1 >= width):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def _new_value(rng: random.Random, old: int, kind: str) -> int:
    choices = [old + 1, old - 1, old + rng.randint(2, 64), old - rng.randint(2, 64), 0,
               old * 2, old // 2, rng.randint(0, max(1, 2 * abs(old) + 16)), 2**31 - 1, -1,
               2**15, 2**63 - 1]
    v = old
    while v == old:
        v = rng.choice(choices)
    if kind != "zigzag":
        v = max(0, min(v, 2**32 - 1 if kind == "length" else 14))
        if v == old:
            v = old + 1 if kind == "length" or old < 14 else old - 1
    return v


def _rewrite_int(data: bytes, f: IntField, new: int) -> bytes:
    if f.kind == "nibble":
        return data[: f.offset] + bytes([(new << 4) | (data[f.offset] & 0x0F)]) + data[f.offset + 1:]
    raw = ((new << 1) ^ (new >> 63)) & (2**64 - 1) if f.kind == "zigzag" else new
    same = _varint(raw, f.width)
    enc = same if len(same) == f.width else _varint(raw)
    out = data[: f.offset] + enc + data[f.offset + f.width:]
    grown = len(enc) - f.width
    if grown and f.where == "footer":
        # The footer's length follows it: keep the tail pointing at the footer's start.
        (n,) = struct.unpack("<i", out[-8:-4])
        out = out[:-8] + struct.pack("<i", n + grown) + out[-4:]
    return out


def mutate(data: bytes, chunks: list[tuple[int, int]], rng: random.Random) -> tuple[str, bytes]:
    """One mutant of `data`: (a description, its bytes)."""
    kinds = list(KINDS)
    kind = rng.choices(kinds, weights=[KINDS[k] for k in kinds])[0]
    n = len(data)
    if kind == "thrift_int":
        ints = page_ints(data, chunks) + footer_ints(data)
        if ints:
            f = rng.choice(ints)
            new = _new_value(rng, f.value, f.kind)
            desc = f"thrift_int {f.where} {f.kind} at {f.offset}: {f.value} -> {new}"
            return desc, _rewrite_int(data, f, new)
        kind = "byte"
    if kind == "byte":
        at = rng.randrange(n)
        v = (data[at] + rng.randint(1, 255)) % 256
        return f"byte {at}: {data[at]:#04x} -> {v:#04x}", data[:at] + bytes([v]) + data[at + 1:]
    if kind == "bit":
        at, bit = rng.randrange(n), rng.randrange(8)
        return f"bit {at}.{bit}", data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1:]
    if kind == "truncate":
        at = rng.randrange(n)
        return f"truncate to {at}", data[:at]
    if kind == "delete":
        at, k = rng.randrange(n), rng.randint(1, 16)
        return f"delete {k} at {at}", data[:at] + data[at + k:]
    if kind == "insert":
        at, k = rng.randrange(n + 1), rng.randint(1, 16)
        extra = bytes(rng.randrange(256) for _ in range(k))
        return f"insert {k} at {at}", data[:at] + extra + data[at:]
    if kind == "footer_len":
        (old,) = struct.unpack("<i", data[-8:-4])
        new = rng.choice([old + 1, old - 1, old + rng.randint(2, 200), old - rng.randint(2, 200),
                          0, -1, n, n - 7, 2**31 - 1])
        return f"footer_len {old} -> {new}", data[:-8] + struct.pack("<i", new) + data[-4:]
    # swap: two bytes of the file exchanged (a misplaced byte, not a new one).
    a, b = rng.randrange(n), rng.randrange(n)
    if a > b:
        a, b = b, a
    out = bytearray(data)
    out[a], out[b] = out[b], out[a]
    return f"swap {a} {b}", bytes(out)
