#!/usr/bin/env python3
"""Check the source layout (README.md, "Architecture"): each lib/ folder includes
only what its README allows, no module includes itself round a circle, no
source file is over the size limit, and nothing calls qsort() itself. Prints one line per problem; exit 1 if any.

usage: tools/layout.py [SRCDIR]"""
import os
import re
import sys

MAX_LINES = 800
top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
os.chdir(top)
problems = []

def sources(folder):
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            # protoc-c's output (lib/export/profile.pb-c.*) is generated, not ours.
            if f.endswith(('.c', '.h')) and not f.endswith(('.pb-c.c', '.pb-c.h')):
                yield os.path.join(root, f)

def includes(path):
    with open(path, encoding='utf-8') as f:
        return re.findall(r'^#\s*include\s+"([^"]+)"', f.read(), re.M)

# What each folder may include, from the "May include:" line of its README.
allowed = {}
for folder in sorted(os.listdir('lib')):
    readme = os.path.join('lib', folder, 'README.md')
    if not os.path.isdir(os.path.join('lib', folder)):
        continue
    if not os.path.exists(readme):
        problems.append(f"lib/{folder} has no README.md saying what it owns and may include")
        continue
    text = open(readme, encoding='utf-8').read()
    m = re.search(r'^May include:(.*)$', text, re.M)
    if not m:
        problems.append(f"{readme} has no 'May include:' line")
        continue
    rule = m.group(1)
    paths = re.findall(r'lib/[a-z-]+(?:/[a-z-]+\.h)?', rule)
    allowed[folder] = set(paths) | {f'lib/{folder}'}

for folder, ok in sorted(allowed.items()):
    for path in sources(os.path.join('lib', folder)):
        for inc in includes(path):
            if not inc.startswith('lib/'):
                continue
            inc_folder = '/'.join(inc.split('/')[:2])
            if inc not in ok and inc_folder not in ok:
                problems.append(f"{path} includes '{inc}', which lib/{folder}/README.md does not allow")

# Modules (a file's stem, .c and .h together; X-private.h is X's) must not
# include each other round a circle.
def module(path):
    stem = os.path.splitext(path)[0]
    return stem[:-len('-private')] if stem.endswith('-private') else stem
graph = {}
for folder in ['lib', 'cmd']:
    for path in sources(folder):
        mod = module(path)
        for inc in includes(path):
            dep = module(inc)
            if dep != mod and os.path.exists(inc):
                graph.setdefault(mod, set()).add(dep)
state = {}
def visit(m, trail):
    state[m] = 1
    for d in sorted(graph.get(m, ())):
        if state.get(d) == 1:
            cycle = trail[trail.index(d):] + [d] if d in trail else [m, d]
            problems.append("include circle: " + " -> ".join(cycle))
        elif d not in state:
            visit(d, trail + [d])
    state[m] = 2
for m in sorted(graph):
    if m not in state:
        visit(m, [m])

for folder in ['lib', 'cmd']:
    for path in sources(folder):
        n = sum(1 for _ in open(path, encoding='utf-8'))
        if n > MAX_LINES:
            problems.append(f"{path} has {n} lines, over {MAX_LINES}: split it along its seams")

# Arrays that may be empty (often NULL) are sorted with lib/util/sort.h, never qsort() itself.
for folder in ['lib', 'cmd']:
    for path in sources(folder):
        if path == os.path.join('lib', 'util', 'sort.h'):
            continue
        with open(path, encoding='utf-8') as f:
            for no, line in enumerate(f, 1):
                if re.search(r'(?<![\w])qsort(_r)?\s*\(', line):
                    problems.append(f"{path}:{no} calls qsort(): use mp_qsort() of lib/util/sort.h, "
                                    "which takes empty (NULL) arrays")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
