"""IP and CIDR values as kube-apiserver v1.33 parses, validates and warns about them (layer L4).

Why: upstream validates the IP/CIDR fields of built-in kinds with `netutils.ParseIPSloppy` /
`ParseCIDRSloppy` (Go 1.16's `net.ParseIP` / `net.ParseCIDR`, kept for compatibility with stored
values): IPv4 octets may carry leading zeros (`010.0.0.1` is 10.0.0.1) and IPv4-mapped IPv6 values
(`::ffff:1.2.3.4`) are accepted. With the StrictIPCIDRValidation gate off (v1.33's default) such
values stay valid, and the apiserver warns instead (KEP-4858): apimachinery's `GetWarningsForIP` /
`GetWarningsForCIDR` (k8s.io/apimachinery/pkg/util/validation/ip.go), which compare the sloppy
parse with Go's strict `netip.ParseAddr` / `netip.ParsePrefix`.

Here:
- `parse_ip_sloppy` / `parse_cidr_sloppy`: the sloppy parsers (None for what they refuse);
- `is_valid_ip_legacy` / `is_valid_cidr_legacy`: IsValidIPForLegacyField /
  IsValidCIDRForLegacyField with strict validation off (the field error, or None);
- `get_warnings_for_ip` / `get_warnings_for_cidr`: the warning texts, in upstream's words
  (`ip_problem`: the text without its field path, for callers that build paths only when needed);
- `ip_string` / `CIDR.string`: Go's `net.IP.String()` / `(*net.IPNet).String()`.

An address is kept as Go keeps it: 16 bytes (an IPv4 address in its IPv4-mapped form); a CIDR's
network as 4 bytes (parsed as IPv4) or 16 (parsed as IPv6), with the prefix length and the
address length in bits (32 or 128). Values that do not parse get no warning (upstream logs
"GetWarningsForIP called on value that was not validated" and returns none).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

_BIG = 0xFFFFFF  # Go's net.big: dtoi/xtoi give up past it
_V4_IN_V6 = bytes(10) + b"\xff\xff"
# a dotted quad in canonical form (no leading zeros): the common case, answered without parsing
_CANONICAL_V4 = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\Z")

IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


# ---- Go 1.16 net.ParseIP / net.ParseCIDR (k8s.io/utils/net's "sloppy" fork) ------------------------


def _dtoi(s: str, i: int) -> tuple[int, int, bool]:
    """Decimal digits from s[i:]: (value, index after them, ok); ok is False without digits."""
    n, j = 0, i
    while j < len(s) and "0" <= s[j] <= "9":
        n = n * 10 + ord(s[j]) - 48
        if n >= _BIG:
            return _BIG, j, False
        j += 1
    return n, j, j > i


def _xtoi(s: str, i: int) -> tuple[int, int, bool]:
    """Hex digits from s[i:], as _dtoi."""
    n, j = 0, i
    while j < len(s):
        c = s[j]
        if "0" <= c <= "9":
            d = ord(c) - 48
        elif "a" <= c <= "f":
            d = ord(c) - 87
        elif "A" <= c <= "F":
            d = ord(c) - 55
        else:
            break
        n = n * 16 + d
        if n >= _BIG:
            return 0, j, False
        j += 1
    return n, j, j > i


def _parse_v4(s: str) -> bytes | None:
    """parseIPv4 without Go 1.17's leading-zero check: the 16-byte IPv4-mapped form."""
    out = bytearray(4)
    i = 0
    for k in range(4):
        if i >= len(s):
            return None
        if k > 0:
            if s[i] != ".":
                return None
            i += 1
        n, i, ok = _dtoi(s, i)
        if not ok or n > 0xFF:
            return None
        out[k] = n
    return _V4_IN_V6 + bytes(out) if i == len(s) else None


def _parse_v6(s: str) -> bytes | None:  # noqa: C901 - a line-by-line port of Go's parseIPv6
    ip = bytearray(16)
    ellipsis = -1
    pos = 0
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis, pos = 0, 2
        if pos == len(s):
            return bytes(ip)
    i = 0
    while i < 16:
        n, c, ok = _xtoi(s, pos)
        if not ok or n > 0xFFFF:
            return None
        if c < len(s) and s[c] == ".":  # a trailing dotted IPv4 part
            if (ellipsis < 0 and i != 12) or i + 4 > 16:
                return None
            v4 = _parse_v4(s[pos:])
            if v4 is None:
                return None
            ip[i:i + 4] = v4[12:]
            pos = len(s)
            i += 4
            break
        ip[i], ip[i + 1] = n >> 8, n & 0xFF
        i += 2
        pos = c
        if pos == len(s):
            break
        if s[pos] != ":" or pos + 1 == len(s):
            return None
        pos += 1
        if s[pos] == ":":
            if ellipsis >= 0:
                return None
            ellipsis = i
            pos += 1
            if pos == len(s):
                break
    if pos != len(s):
        return None
    if i < 16:
        if ellipsis < 0:
            return None
        shift = 16 - i
        ip[ellipsis + shift:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + shift] = bytes(shift)
    elif ellipsis >= 0:
        return None  # "::" must stand for at least one zero group
    return bytes(ip)


def parse_ip_sloppy(value: str) -> bytes | None:
    """netutils.ParseIPSloppy: the address as 16 bytes, or None. The first '.' or ':' decides the
    family, as in Go."""
    for ch in value:
        if ch == ".":
            return _parse_v4(value)
        if ch == ":":
            return _parse_v6(value)
    return None


def _to4(ip: bytes) -> bytes | None:
    if len(ip) == 4:
        return ip
    return ip[12:] if ip[:12] == _V4_IN_V6 else None


def ip_string(ip: bytes) -> str:
    """Go's net.IP.String(): dotted for IPv4 (also an IPv4-mapped 16-byte value), RFC 5952 otherwise."""
    v4 = _to4(ip)
    if v4 is not None:
        return ".".join(str(b) for b in v4)
    return str(ipaddress.IPv6Address(ip))


@dataclass(frozen=True, slots=True)
class CIDR:
    """A parsed CIDR value: `ip` as written (16 bytes), the masked `network` (4 bytes when the
    address parsed as IPv4, else 16), the prefix length `ones` and the address length `bits`."""

    ip: bytes
    network: bytes
    ones: int
    bits: int

    def string(self) -> str:
        """(*net.IPNet).String(): an IPv4-mapped network prints as IPv4 with the mask's last 32 bits."""
        v4 = _to4(self.network)
        if v4 is not None and len(self.network) == 16:
            return f"{ip_string(v4)}/{max(self.ones - 96, 0)}"
        return f"{ip_string(self.network)}/{self.ones}"

    def contains(self, ip: bytes) -> bool:
        """(*net.IPNet).Contains."""
        net, ones, bits = self.network, self.ones, self.bits
        v4net = _to4(net)
        if v4net is not None and len(net) == 16:
            net, ones, bits = v4net, max(ones - 96, 0), 32
        x = _to4(ip)
        addr = x if x is not None else ip
        if len(addr) != len(net):
            return False
        return _masked(addr, ones, bits) == _masked(net, ones, bits)


def _masked(b: bytes, ones: int, bits: int) -> bytes:
    value = int.from_bytes(b, "big")
    mask = ((1 << bits) - 1) ^ ((1 << (bits - ones)) - 1)
    return (value & mask).to_bytes(len(b), "big")


def parse_cidr_sloppy(value: str) -> CIDR | None:
    """netutils.ParseCIDRSloppy: IPv4 first, then IPv6; the prefix length in decimal (leading
    zeros allowed), at most the family's bit length."""
    slash = value.find("/")
    if slash < 0:
        return None
    addr, mask = value[:slash], value[slash + 1:]
    bits = 32
    ip = _parse_v4(addr)
    if ip is None:
        bits = 128
        ip = _parse_v6(addr)
    n, end, ok = _dtoi(mask, 0)
    if ip is None or not ok or end != len(mask) or n > bits:
        return None
    raw = ip[12:] if bits == 32 else ip
    return CIDR(ip, _masked(raw, n, bits), n, bits)


# ---- Go's netip (strict) ----------------------------------------------------------------------------


def _parse_addr_strict(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """netip.ParseAddr for values the sloppy parser accepted (so no zone): no leading zeros in
    IPv4 octets, at most four hex digits per IPv6 group."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _parse_prefix_strict(value: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int] | None:
    """netip.ParsePrefix: a strict address, then a decimal prefix length without sign or leading
    zeros, at most the address's bit length."""
    slash = value.rfind("/")
    if slash < 0:
        return None
    addr = _parse_addr_strict(value[:slash])
    bits_str = value[slash + 1:]
    if addr is None or not bits_str.isascii() or not bits_str.isdigit():
        return None
    if len(bits_str) > 1 and bits_str[0] == "0":
        return None
    ones = int(bits_str)
    return (addr, ones) if ones <= addr.max_prefixlen else None


def _strict_string(addr: ipaddress.IPv6Address) -> str:
    """netip.Addr.String() of an IPv6 address that is not IPv4-mapped."""
    return str(addr)


# ---- validation and warnings ------------------------------------------------------------------------


def is_valid_ip_legacy(value: str) -> str | None:
    """IsValidIPForLegacyField with strict validation off: the error message, or None."""
    return None if parse_ip_sloppy(value) is not None else IP_MSG


def is_valid_cidr_legacy(value: str) -> str | None:
    """IsValidCIDRForLegacyField with strict validation off: the error message, or None."""
    return None if parse_cidr_sloppy(value) is not None else CIDR_MSG


@lru_cache(maxsize=16384)
def ip_problem(value: str) -> str | None:
    """What GetWarningsForIP says about `value` after its `<path>: ` prefix, or None (canonical or
    unparsable). Cached: a controller writes the same addresses again and again."""
    if _CANONICAL_V4.match(value):
        return None
    ip = parse_ip_sloppy(value)
    if ip is None:
        return None
    addr = _parse_addr_strict(value)
    if addr is None or (isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None):
        return (f'non-standard IP address "{value}" will be considered invalid in a future Kubernetes release: '
                f'use "{ip_string(ip)}"')
    if isinstance(addr, ipaddress.IPv6Address) and _strict_string(addr) != value:
        return f'IPv6 address "{value}" should be in RFC 5952 canonical format ("{_strict_string(addr)}")'
    return None


def get_warnings_for_ip(path: str, value: str) -> list[str]:
    """GetWarningsForIP: leading zeros or an IPv4-mapped value ("non-standard", with the form to
    use instead), or an IPv6 value not in RFC 5952 form. [] for canonical or unparsable values."""
    problem = ip_problem(value)
    return [f"{path}: {problem}"] if problem is not None else []


def get_warnings_for_cidr(path: str, value: str) -> list[str]:
    """GetWarningsForCIDR: bits set after the prefix length ("ambiguous"), leading zeros or an
    IPv4-mapped address ("non-standard"), else an IPv6 value not in RFC 5952 form."""
    cidr = parse_cidr_sloppy(value)
    if cidr is None:
        return []
    warnings: list[str] = []
    network16 = _V4_IN_V6 + cidr.network if len(cidr.network) == 4 else cidr.network
    if cidr.ip != network16:
        warnings.append(f'{path}: CIDR value "{value}" is ambiguous in this context (should be "{cidr.string()}" or '
                        f'"{ip_string(cidr.ip)}/{cidr.bits}"?)')
    prefix = _parse_prefix_strict(value)
    addr = prefix[0] if prefix is not None else None
    if prefix is None or (isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None):
        warnings.append(f'{path}: non-standard CIDR value "{value}" will be considered invalid in a future '
                        f'Kubernetes release: use "{cidr.string()}"')
    if not warnings and prefix is not None and isinstance(prefix[0], ipaddress.IPv6Address):
        canonical = f"{_strict_string(prefix[0])}/{prefix[1]}"
        if canonical != value:
            warnings.append(f'{path}: IPv6 CIDR value "{value}" should be in RFC 5952 canonical format ("{canonical}")')
    return warnings
