#!/usr/bin/env python3
"""The import graph of client-capi/src by module (api and state families apart): its circles,
the arrows that run against the layering lib.rs declares, and the API families that use each
other. `crate::` paths outside comments and `#[cfg(test)]` modules; `super::` inside api/ and
state/. Run from anywhere: scripts/client_imports.py. Listed in docs/CLIENT.md.
With --check it exits 1 when there is a circle or an arrow against the layering (API families
using each other aside): client-capi's test `imports` runs it so."""
import os,re,collections,sys
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'client-capi', 'src'))
def node_of(path):
    p=path[2:-3].split('/')
    if p[-1]=='mod': p=p[:-1]
    if p[0] in ('api','state') and len(p)>=2: return p[0]+'::'+p[1]
    if p[0]=='conn' : return 'conn'
    return p[0]
apis=set(f[:-3] if f.endswith('.rs') else f for f in os.listdir('api'))-{'mod'}
states=set(f[:-3] for f in os.listdir('state'))-{'mod'}
edges=collections.defaultdict(set)
where=collections.defaultdict(list)
for dp,dn,fn in os.walk('.'):
    for f in fn:
        if not f.endswith('.rs'): continue
        path=os.path.join(dp,f); src=open(path).read()
        # drop test modules
        src=re.split(r'#\[cfg\(test\)\]\s*mod \w+',src)[0]
        a=node_of(path)
        if path.count('/')==2 and path.startswith('./api/'):
            src=re.sub(r'\bsuper::(\w+)', r'crate::api::\1', src)
        if path.count('/')==2 and path.startswith('./state/'):
            src=re.sub(r'\bsuper::(\w+)', r'crate::state::\1', src)
        src='\n'.join('' if l.strip().startswith('//') else l for l in src.split('\n'))
        for m in re.finditer(r'crate::(\w+)(?:::(\w+))?',src):
            x,y=m.group(1),m.group(2)
            if x=='api' and y in apis: b='api::'+y
            elif x=='state' and y in states: b='state::'+y
            elif x in ('api','state'): b=x
            else: b=x
            if b!=a and b not in ('fatbin',):
                edges[a].add(b)
                line=src[:m.start()].count('\n')+1
                where[(a,b)].append(f"{path[2:]}:{line}")
def rank(n):
    if n.startswith('api') or n=='boundary': return 5
    if n in ('handle',) or n.startswith('state'): return 4
    if n=='callbacks': return 4
    if n=='remote': return 3
    if n in ('conn','stripes'): return 2
    if n in ('config', 'visible'): return 1
    if n=='abi': return 0
    return 9
# SCC (Tarjan)
idx={};low={};st=[];on=set();sccs=[];c=[0]
sys.setrecursionlimit(10000)
nodes=set(edges)|{b for v in edges.values() for b in v}
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        sccs.append(comp)
for v in sorted(nodes):
    if v not in idx: sc(v)
big=[s for s in sccs if len(s)>1]
print("circles:", [sorted(s) for s in big] or "none")
print("against layering:")
against=[]
for a in sorted(edges):
    for b in sorted(edges[a]):
        between_families=rank(a)==rank(b)==5 and a.startswith('api::') and b.startswith('api::')
        if rank(b)>rank(a) or between_families:
            print(f"  {a} -> {b}: {', '.join(where[(a,b)][:3])}")
            if not between_families: against.append((a,b))
for comp in big:
  print("inside the circle", sorted(comp))
  S=set(comp)
  for a in sorted(S):
    for b in sorted(edges[a]&S):
        print(f"  {a} -> {b}: {', '.join(where[(a,b)][:2])}")
if '--check' in sys.argv[1:] and (big or against):
    print("client-capi's imports must form no circle and run down the layers (docs/CLIENT.md)", file=sys.stderr)
    sys.exit(1)
