#!/usr/bin/env python3
"""File-level import cycles inside each crate: module A uses B and B, directly or through
others, uses A. Prints each cycle with the lines that close it; exits 1 when there is one.

    python3 scripts/check/import_cycles.py [crates]

What counts as a use of module B from file A, outside comments, string literals and
`#[cfg(test)]` items (test-only module files are skipped whole):
- a `use` declaration naming B, `pub use` re-exports included, with brace groups read to any
  depth (`use crate::{a::{b, c}, d}`), `self`/`super` inside groups, globs and `as` renames;
- a path in code that starts with `crate::`, `super::`, `self::` or a child module's name.
A path that ends at an item another module re-exports (`crate::pages::Page` where pages.rs
says `pub use header::Page`, or a glob `pub use header::*`) counts as a use of the module that
defines the item, followed through any chain of re-exports. A module using its own parent or
any ancestor does not count, re-exports included (`crate::Figure`): the parent declares it,
and its surface is what its children build on.
"""
import os
import re
import sys

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_string>b?r(?P<hashes>\#*)")
  | (?P<string>b?")
  | (?P<char>b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.))')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>r\#[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<path_sep>::)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)

ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod"}


def tokens(text):
    """(kind, text, line) for every token, without comments and literals' contents."""
    out = []
    i = 0
    line = 1
    n = len(text)
    while i < n:
        m = TOKEN.match(text, i)
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw_string"
        start = i
        if kind == "block_comment":
            depth, j = 1, m.end()
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
        elif kind == "raw_string":
            close = '"' + m.group("hashes")
            j = text.find(close, m.end())
            i = n if j < 0 else j + len(close)
            out.append(("literal", "", line))
        elif kind == "string":
            j = m.end()
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append(("literal", "", line))
        else:
            i = m.end()
            if kind in ("ident", "path_sep", "punct"):
                tok = m.group(0)
                if kind == "ident" and tok.startswith("r#"):
                    tok = tok[2:]
                out.append((kind, tok, line))
            elif kind in ("char", "number"):
                out.append(("literal", "", line))
        line += text.count("\n", start, i)
    return out


def skip_item(toks, i):
    """Index just past the item starting at toks[i]: its `;` or its closing brace."""
    depth = 0
    while i < len(toks):
        t = toks[i][1]
        if toks[i][0] == "punct":
            if t in "([{":
                depth += 1
            elif t in ")]}":
                depth -= 1
                if depth < 0:  # the end of what encloses the item
                    return i
                if depth == 0 and t == "}":
                    return i + 1
            elif t == ";" and depth == 0:
                return i + 1
        i += 1
    return i


def attribute_end(toks, i):
    """toks[i] is `#`: the index past its `[...]` (or `![...]`), and whether it is cfg(test)."""
    j = i + 1
    inner = j < len(toks) and toks[j][1] == "!"
    if inner:
        j += 1
    if j >= len(toks) or toks[j][1] != "[":
        return i + 1, False, inner
    start = j
    depth = 0
    while j < len(toks):
        if toks[j][1] == "[":
            depth += 1
        elif toks[j][1] == "]":
            depth -= 1
            if depth == 0:
                break
        j += 1
    body = [t[1] for t in toks[start + 1:j]]
    return j + 1, body == ["cfg", "(", "test", ")"], inner


def without_tests(toks):
    """The tokens outside `#[cfg(test)]` items; the names of `#[cfg(test)] mod name;` files;
    and whether the whole file is test-only (`#![cfg(test)]`)."""
    out, test_mods = [], set()
    i = 0
    while i < len(toks):
        if toks[i][1] == "#":
            end, is_test, inner = attribute_end(toks, i)
            if is_test and inner:
                return [], set(), True
            if is_test:
                j = end
                while j < len(toks) and toks[j][1] == "#":  # further attributes of the item
                    j = attribute_end(toks, j)[0]
                k = j
                while k < len(toks) and toks[k][1] in ("pub", "(", "crate", "super", "in", ")"):
                    k += 1
                if k + 2 < len(toks) and toks[k][1] == "mod" and toks[k + 2][1] == ";":
                    test_mods.add(toks[k + 1][1])
                i = skip_item(toks, j)
                continue
        out.append(toks[i])
        i += 1
    return out, test_mods, False


def parse_use_tree(toks, i, prefix, out, line):
    """Appends (path, alias, line) for each leaf of the use tree at toks[i]; returns the index
    past it. `alias` is the name the leaf binds (None for a glob)."""
    segs = list(prefix)
    while i < len(toks):
        kind, t, _ = toks[i]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i][1] != "}":
                if toks[i][1] == ",":
                    i += 1
                    continue
                i = parse_use_tree(toks, i, segs, out, line)
            return i + 1
        if t == "*":
            out.append((segs + ["*"], None, line))
            return i + 1
        if kind == "path_sep":
            i += 1
            continue
        if kind != "ident":
            return i
        if t == "self" and segs and segs == list(prefix) and prefix:
            # `a::{self, ...}` names `a` itself.
            pass
        else:
            segs.append(t)
        i += 1
        if i < len(toks) and toks[i][0] == "path_sep":
            continue
        alias = segs[-1] if segs else None
        if i + 1 < len(toks) and toks[i][1] == "as":
            alias = toks[i + 1][1]
            i += 2
        out.append((segs, alias, line))
        return i
    return i


def modpath(crate_src, f):
    rel = os.path.relpath(f, crate_src)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


class Crate:
    def __init__(self, src):
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs
                       if f.endswith(".rs"))
        self.files = {}
        for f in files:
            m = modpath(src, f)
            # `main.rs` beside `lib.rs` is another crate root: keep lib.rs for the root.
            if m in self.files and f.endswith("main.rs"):
                continue
            self.files[m] = f
        self.uses = {}    # module -> [(path, alias, line)] from `use` declarations
        self.paths = {}   # module -> [(path, line)] from paths in code
        self.defined = {}  # module -> names of items defined in it
        test_only = set()
        for m, f in self.files.items():
            with open(f, encoding="utf-8") as fh:
                toks, test_mods, whole = without_tests(tokens(fh.read()))
            if whole:
                test_only.add(m)
            test_only.update(m + (name,) for name in test_mods)
            self.scan(m, toks)
        self.mods = {m: f for m, f in self.files.items()
                     if not any(m[:len(t)] == t for t in test_only)}

    def scan(self, m, toks):
        uses, paths, defined = [], [], set()
        i = 0
        while i < len(toks):
            kind, t, line = toks[i]
            if kind != "ident":
                i += 1
                continue
            prev = toks[i - 1][1] if i else ""
            if t == "use" and not (i + 1 < len(toks) and toks[i + 1][1] == "<"):
                i = parse_use_tree(toks, i + 1, [], uses, line)
                continue
            if t in ITEM_KEYWORDS and i + 1 < len(toks) and toks[i + 1][0] == "ident":
                defined.add(toks[i + 1][1])
            if prev != "::" and prev != "." and i + 1 < len(toks) and toks[i + 1][0] == "path_sep":
                segs = [t]
                j = i + 1
                while j + 1 < len(toks) and toks[j][0] == "path_sep" and toks[j + 1][0] == "ident":
                    segs.append(toks[j + 1][1])
                    j += 2
                paths.append((segs, line))
                i = j
                continue
            i += 1
        self.uses[m], self.paths[m], self.defined[m] = uses, paths, defined

    def start(self, m, segs):
        """The module a path starts from and its remaining segments; None for other crates."""
        if not segs:
            return None
        if segs[0] == "crate":
            return (), segs[1:]
        if segs[0] == "self":
            return m, segs[1:]
        if segs[0] == "super":
            i = 0
            while i < len(segs) and segs[i] == "super":
                i += 1
            return m[:max(len(m) - i, 0)], segs[i:]
        if m + (segs[0],) in self.files:
            return m, segs
        return None

    def resolve(self, m, segs, seen=None):
        """The module that defines what `segs`, written in module m, names; None if outside."""
        s = self.start(m, segs)
        if s is None:
            return None
        base, rest = s
        k = 0
        while k < len(rest) and base + tuple(rest[:k + 1]) in self.files:
            k += 1
        target = base + tuple(rest[:k])
        rest = rest[k:]
        if not rest or rest[0] == "*" or m[:len(target)] == target:
            # A name taken from an ancestor is a use of that ancestor, which is allowed: the
            # parent's own surface, its re-exports included, is what its children build on.
            return target
        return self.item(target, rest[0], seen or set())

    def item(self, mod, name, seen):
        """The module that defines `name` as seen from module `mod` (following imports)."""
        if (mod, name) in seen or mod not in self.files:
            return mod
        seen.add((mod, name))
        if name in self.defined.get(mod, ()):
            return mod
        for path, alias, _ in self.uses.get(mod, ()):
            if alias == name:
                found = self.resolve(mod, path, seen)
                return mod if found is None else found
        for path, alias, _ in self.uses.get(mod, ()):
            if alias is None:
                glob = self.resolve(mod, path, seen)
                if glob is not None and glob in self.files and glob != mod:
                    if name in self.defined.get(glob, ()) or any(
                            a == name or a is None for _, a, _ in self.uses.get(glob, ())):
                        return self.item(glob, name, seen)
        return mod

    def edges(self):
        """module -> {used module: (line, path)}."""
        edges = {m: {} for m in self.mods}
        for m in self.mods:
            found = [(p, line) for p, _, line in self.uses[m]] + self.paths[m]
            for path, line in found:
                target = self.resolve(m, path)
                if target is None or target == m or target not in self.mods:
                    continue
                if m[:len(target)] == target:  # an ancestor
                    continue
                edges[m].setdefault(target, (line, "::".join(path)))
        return edges


def components(edges):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, stack, on, res = {}, {}, [], set(), []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    res.append(sorted(comp))
    return res


def a_cycle(edges, comp):
    """One shortest cycle through the component's first module."""
    first = comp[0]
    inside = set(comp)
    prev = {first: None}
    queue = [first]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w not in inside:
                continue
            if w == first:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1] + [first]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def name(m):
    return "::".join(m) or "lib"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "crates"
    cycles = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        c = Crate(src)
        edges = c.edges()
        for comp in components(edges):
            cycles += 1
            cycle = a_cycle(edges, comp)
            print(f"{crate}: {' -> '.join(name(m) for m in cycle)}"
                  f"  (modules in the cycle: {', '.join(name(m) for m in comp)})")
            for a, b in zip(cycle, cycle[1:]):
                line, path = edges[a][b]
                rel = os.path.relpath(c.mods[a], root)
                print(f"    {rel}:{line} uses {path}")
    print("import cycles:", cycles)
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
