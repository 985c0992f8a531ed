#!/usr/bin/env python3
"""The public headers: what tessera/tessera.h names, and what the aggregate headers it names in turn
name (nn/nn.h, ops/ops.h, optim/optim.h: headers made only of #include lines).

  python3 tools/api_docs/public_headers.py     # one path per line, relative to the repository root

Headers that these reach only through their own includes (ir/node.h, core/half.h, ...) are the layers
underneath: reachable, but not the API a program is written against, and not checked for comments.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s*"(tessera/[^"]+)"')


def includes(header):
    with open(os.path.join(ROOT, header), encoding="utf-8") as f:
        return [m.group(1) for m in map(INCLUDE.match, f) if m]


def is_aggregate(header):
    """A header whose only code is #include lines (besides #pragma once and comments)."""
    with open(os.path.join(ROOT, header), encoding="utf-8") as f:
        code = [line.strip() for line in f if line.strip() and not line.strip().startswith("//")]
    return all(line.startswith("#include") or line == "#pragma once" for line in code)


def public_headers():
    out = []
    for header in includes("tessera/tessera.h"):
        if is_aggregate(header):
            out += [h for h in includes(header) if h not in out]
        elif header not in out:
            out.append(header)
    return sorted(set(out))


if __name__ == "__main__":
    print("\n".join(public_headers()))
