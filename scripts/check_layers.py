#!/usr/bin/env python3
"""The include graph of the library (tessera/) and its layer check.

Every `#include "tessera/..."` line of every file under tessera/ is an edge from the including file to
the included one. The layers, bottom to top, are declared once, in cmake/layers.cmake (one
`tessera_layer(name sources...)` line each, read here and by CMake); a file belongs to the layer whose
source entry (a folder with its subfolders, or one file) names it most specifically.

  python3 scripts/check_layers.py           # the check: fails on any include that points up the layers
  python3 scripts/check_layers.py --graph   # the folder graph, its cycles, and the layer graph

The check also fails on a file that no layer holds and on an include of a file that does not exist.
Headers of the top folder (tessera/tessera.h, the umbrella header) may include any layer. Run by ctest
as `layers.includes`; the link half of the check (each layer's archive linked whole, with only the
layers below it) is cmake/layers.cmake's tessera_layer_check_* executables.
"""
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "tessera")
LAYERS_FILE = os.path.join(ROOT, "cmake", "layers.cmake")
INCLUDE = re.compile(r'^\s*#\s*include\s*"tessera/([^"]+)"')
LAYER_LINE = re.compile(r"^\s*tessera_layer\(\s*(\w+)\s+([^)#]*)\)")


def read_layers():
    """[(name, [source entries])] bottom to top, from cmake/layers.cmake."""
    layers = []
    with open(LAYERS_FILE) as f:
        for line in f:
            m = LAYER_LINE.match(line)
            if m:
                entries = [e for e in m.group(2).split() if not e.isupper()]  # keywords (OPTIONAL) are not sources
                layers.append((m.group(1), entries))
    if not layers:
        sys.exit(f"check_layers: no tessera_layer(...) lines in {LAYERS_FILE}")
    return layers


def library_files():
    out = []
    for d, _, files in os.walk(LIB):
        for f in files:
            if f.endswith((".cpp", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), LIB))
    return sorted(out)


def folder_of(rel):
    """The graph's unit: a folder under tessera/, backends' subfolders counted apart."""
    parts = rel.split("/")
    if len(parts) == 1:
        return "(top)"
    if parts[0] == "backends" and len(parts) > 2:
        return "backends/" + parts[1]
    return parts[0]


def includes(rel):
    with open(os.path.join(LIB, rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def layer_of_factory(layers):
    entries = [(entry.rstrip("/"), index) for index, (_, srcs) in enumerate(layers) for entry in srcs]

    def layer_of(rel):
        best, best_len = None, -1
        for entry, index in entries:
            if (rel == entry or rel.startswith(entry + "/")) and len(entry) > best_len:
                best, best_len = index, len(entry)
        return best

    return layer_of


def strongly_connected(nodes, edges):
    """Tarjan's algorithm; components of more than one node, each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out)


def print_graph(files, layers):
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for rel in files:
        for number, inc in includes(rel):
            a, b = folder_of(rel), folder_of(inc)
            if a != b:
                edges[a][b].append(f"{rel}:{number}")
    nodes = {folder_of(r) for r in files}
    print("folder graph (folder -> folders it includes, with the number of include lines):")
    for a in sorted(nodes):
        if edges[a]:
            print(f"  {a} -> " + ", ".join(f"{b} ({len(edges[a][b])})" for b in sorted(edges[a])))
    cycles = strongly_connected(nodes, {a: set(bs) for a, bs in edges.items()})
    print("folder cycles (strongly connected folders):" if cycles else "folder cycles: none")
    for comp in cycles:
        print("  " + " <-> ".join(comp))
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print(f"      {a} -> {b}: " + ", ".join(edges[a][b][:3]) + (" ..." if len(edges[a][b]) > 3 else ""))
    if layers:
        layer_of = layer_of_factory(layers)
        names = [n for n, _ in layers]
        used = collections.defaultdict(set)
        for rel in files:
            la = layer_of(rel)
            for _, inc in includes(rel):
                lb = layer_of(inc)
                if la is not None and lb is not None and la != lb:
                    used[la].add(lb)
        print("layer graph (bottom to top; the layers each one includes):")
        for i, n in enumerate(names):
            print(f"  {i:2d} {n:9s} -> " + ", ".join(names[j] for j in sorted(used[i])))


def check(files, layers):
    layer_of = layer_of_factory(layers)
    names = [n for n, _ in layers]
    problems = []
    for rel in files:
        la = layer_of(rel)
        top = "/" not in rel and rel.endswith(".h")  # the umbrella header
        if la is None and not top:
            problems.append(f"tessera/{rel}: in no layer (add its folder to cmake/layers.cmake)")
            continue
        for number, inc in includes(rel):
            if not os.path.exists(os.path.join(LIB, inc)):
                problems.append(f"tessera/{rel}:{number}: includes tessera/{inc}, which does not exist")
                continue
            lb = layer_of(inc)
            if top or lb is None:
                continue
            if lb > la:
                problems.append(f"tessera/{rel}:{number}: layer '{names[la]}' includes tessera/{inc} "
                                f"of layer '{names[lb]}', which is above it")
    for p in problems:
        print(p)
    order = " < ".join(names)
    if problems:
        print(f"check_layers: {len(problems)} problem(s); the layers, bottom to top: {order}")
        return 1
    print(f"check_layers: {len(files)} files, every include points down or within its layer: {order}")
    return 0


def main():
    files = library_files()
    layers = read_layers() if os.path.exists(LAYERS_FILE) else None
    if "--graph" in sys.argv[1:]:
        print_graph(files, layers)
        return 0
    if layers is None:
        sys.exit(f"check_layers: {LAYERS_FILE} is missing")
    return check(files, layers)


if __name__ == "__main__":
    sys.exit(main())
