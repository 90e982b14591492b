"""The hash Prometheus spreads rule groups over their interval with: ``labels.Labels.Hash()``.

A group evaluates at ``hash % interval`` past each multiple of its interval,
where the hash is XXH64 of ``file\\xff<file>\\xffname\\xff<name>\\xff``. This is
a plain implementation of XXH64 (seed 0) for those few bytes.
"""

from __future__ import annotations

_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
_MASK = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(acc: int, lane: int) -> int:
    return ((acc ^ _round(0, lane)) * _P1 + _P4) & _MASK


def xxh64(data: bytes) -> int:
    n = len(data)
    i = 0
    if n >= 32:
        v = [(_P1 + _P2) & _MASK, _P2, 0, (-_P1) & _MASK]
        while i + 32 <= n:
            for lane in range(4):
                v[lane] = _round(v[lane], int.from_bytes(data[i + 8 * lane:i + 8 * lane + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _MASK
        for lane in v:
            h = _merge(h, lane)
    else:
        h = _P5
    h = (h + n) & _MASK
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[i:i + 8], "little")), 27) * _P1 + _P4) & _MASK
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[i:i + 4], "little") * _P1 & _MASK), 23) * _P2 + _P3) & _MASK
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5 & _MASK), 11) * _P1) & _MASK
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _MASK
    h ^= h >> 29
    h = (h * _P3) & _MASK
    return h ^ (h >> 32)


def group_hash(file: str, name: str) -> int:
    """``labels.New({name: <name>}, {file: <file>}).Hash()``: labels in name order, each followed by 0xff."""
    return xxh64(b"file\xff" + file.encode() + b"\xffname\xff" + name.encode() + b"\xff")
