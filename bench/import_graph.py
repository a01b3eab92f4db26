"""Import-graph figures of a source tree: module-level and package-level import cycles.

Every import counts, also those inside functions (grimp reads each import statement). A cycle is a
strongly connected component of more than one node; packages are auralgen's direct children.

    .venv/bin/python bench/import_graph.py            # this checkout
    PYTHONPATH=/path/to/other/checkout .venv/bin/python bench/import_graph.py   # another one (e.g. a git worktree)
"""

from __future__ import annotations

import sys

import grimp


def cycles(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main() -> int:
    graph = grimp.build_graph("auralgen", cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: {d for d in graph.find_modules_directly_imported_by(m) if d.startswith("auralgen")} for m in modules}
    top = lambda m: ".".join(m.split(".")[:2])  # noqa: E731
    packages: dict[str, set[str]] = {}
    for m, deps in edges.items():
        packages.setdefault(top(m), set()).update(top(d) for d in deps if top(d) != top(m))
    module_cycles = cycles(modules, edges)
    package_cycles = cycles(sorted(packages), packages)
    print(
        f"{len(modules)} modules; module-level cycles: {len(module_cycles)}; package-level cycles: "
        f"{len(package_cycles)}"
    )
    for c in module_cycles:
        print("  module cycle:", " <-> ".join(c))
    for c in package_cycles:
        print("  package cycle:", " <-> ".join(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
