#!/usr/bin/env python3
"""File-level import cycles inside each crate: module A uses B (`crate::`/`super::` paths
outside comments and test modules) and B, directly or through others, uses A. A child
using its own parent does not count. Prints each cycle; exits 1 when there is one.

    python3 scripts/check/import_cycles.py [crates]
"""
import os,re,sys,itertools
root=sys.argv[1] if len(sys.argv)>1 else 'crates'
def modpath(crate_src, f):
    rel=os.path.relpath(f,crate_src)[:-3]
    parts=rel.split(os.sep)
    if parts[-1] in ('mod','lib','main'): parts=parts[:-1]
    return tuple(parts)
cycles=0
for crate in sorted(os.listdir(root)):
    src=os.path.join(root,crate,'src')
    if not os.path.isdir(src): continue
    files=[os.path.join(d,f) for d,_,fs in os.walk(src) for f in fs if f.endswith('.rs')]
    mods={modpath(src,f):f for f in files}
    edges={m:set() for m in mods}
    for m,f in mods.items():
        txt="\n".join(l for l in open(f).read().split("\n") if not l.lstrip().startswith("//"))
        # drop test modules
        txt=re.split(r'#\[cfg\(test\)\]\s*mod tests\s*\{',txt)[0]
        for u in re.findall(r'(?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+',txt):
            segs=u.split('::')
            if segs[0]=='super':
                base=list(m)
                if not f.endswith(('mod.rs',)): base=base[:-1]
                # super from file m: parent
                i=0
                while i<len(segs) and segs[i]=='super':
                    i+=1
                base=list(m)[:len(m)-i]
                rest=segs[i:]
            else:
                base=[]; rest=segs[1:]
            # longest prefix that is a module
            best=None
            for k in range(len(rest),-1,-1):
                t=tuple(base+rest[:k])
                if t in mods: best=t;break
            if best is not None and best!=m and not (m[:len(best)]==best):
                edges[m].add(best)
    # find cycles of length 2+ via SCC
    idx={};low={};st=[];on=set();res=[];c=[0]
    def sc(v):
        idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
        for w in edges[v]:
            if w not in idx: sc(w);low[v]=min(low[v],low[w])
            elif w in on: low[v]=min(low[v],idx[w])
        if low[v]==idx[v]:
            comp=[]
            while True:
                w=st.pop();on.discard(w);comp.append(w)
                if w==v:break
            if len(comp)>1: res.append(comp)
    sys.setrecursionlimit(10000)
    for v in mods:
        if v not in idx: sc(v)
    for comp in res:
        cycles+=1
        print(crate, ['::'.join(x) or 'lib' for x in comp])
print("import cycles:", cycles)
sys.exit(1 if cycles else 0)
