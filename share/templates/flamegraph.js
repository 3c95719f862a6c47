/* memprof flame graph page: the call tree, thread views, temporal windows, canvas drawing,
   zoom (in the URL fragment), search, tooltips and keyboard navigation. */
(function (MP) {
  'use strict';
  var d = MP.load();
  var ROW = 18, MINW = 2, FONT = '11px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
  var split = !!(d.split_threads && d.tree && d.tree.thread);
  /* Differential (memprof flamegraph --diff): the tree carries the base capture's values too. */
  var diff = !!(d.diff && d.tree && d.tree.base_self_bytes);
  var what = { peak: 'at the peak of the tracked heap', leaks: 'still allocated when tracking ended',
    temporary: 'in temporary allocations' }[d.mode] || '';

  MP.frame('flame graph', [
    'Each box is a function; its width is the memory ' + what + ' in calls made through it' +
      (d.inverted ? ' (inverted: the first row holds the functions that allocated, the next their callers).' : '.'),
    'Click a box to zoom into it; the browser\'s back and forward buttons move between zoom levels. ' +
      'Esc or "Reset zoom" shows everything again. With the graph focused, the arrow keys move between boxes, Home goes back to the widest and Enter zooms.',
    'Search matches function names and source files (case-insensitive); the total counts every matching subtree once.',
    diff ? 'Differential: widths are the new capture\'s memory ("Widths: base" shows the base capture\'s, where what went away is visible). ' +
      'Red grew from the base to the new capture, blue shrank, grey did not change; the deeper the colour, the larger the change for that box. ' +
      'Purple: search matches; hatched grey: boxes too small to draw.'
      : 'Colours: yellow C, orange C++, red Rust, green other sources, blue library code without sources, ' +
      'grey unsymbolized, purple search matches, hatched grey boxes too small to draw (hover for their total).'
  ]);

  /* ---- trees: preorder arrays; end[i] is one past the last node of i's subtree ---- */
  function alloc(n, withThread) {
    return {
      n: n, depth: new Int32Array(n), parent: new Int32Array(n), end: new Int32Array(n), sub: new Int32Array(n),
      loc: new Int32Array(n), thread: withThread ? new Int32Array(n) : null,
      selfB: new Float64Array(n), selfC: new Float64Array(n), bytes: new Float64Array(n), count: new Float64Array(n),
      /* Differential: the other capture's values (the base's, or the new one's after "Widths: base"). */
      selfB2: null, selfC2: null, bytes2: null, count2: null
    };
  }
  function shape(t) {
    var i, p;
    for (i = 0; i < t.n; i++) { t.end[i] = i + 1; t.sub[i] = t.depth[i]; }
    for (i = t.n - 1; i > 0; i--) {
      p = t.parent[i];
      if (t.end[i] > t.end[p]) t.end[p] = t.end[i];
      if (t.sub[i] > t.sub[p]) t.sub[p] = t.sub[i];
    }
  }
  function sums(t) {
    t.bytes.set(t.selfB);
    t.count.set(t.selfC);
    if (t.bytes2) { t.bytes2.set(t.selfB2); t.count2.set(t.selfC2); }
    for (var i = t.n - 1; i > 0; i--) {
      t.bytes[t.parent[i]] += t.bytes[i];
      t.count[t.parent[i]] += t.count[i];
      if (t.bytes2) { t.bytes2[t.parent[i]] += t.bytes2[i]; t.count2[t.parent[i]] += t.count2[i]; }
    }
  }
  function baseTree() {
    var T = d.tree || {}, dep = T.depth || [], n = dep.length, path = [0];
    if (!n || dep[0] !== 0) MP.fail('memprof: the report has no call tree');
    var t = alloc(n, split);
    t.parent[0] = -1;
    t.loc[0] = -1;
    if (split) t.thread[0] = -1;
    t.selfB[0] = T.self_bytes[0];
    t.selfC[0] = T.self_count[0];
    for (var i = 1; i < n; i++) {
      var k = dep[i];
      if (!(k >= 1 && k <= path.length)) MP.fail('memprof: bad tree depth at node ' + i);
      path.length = k;
      t.parent[i] = path[k - 1];
      path.push(i);
      t.depth[i] = k;
      t.loc[i] = T.location[i];
      if (split) t.thread[i] = T.thread[i];
      t.selfB[i] = T.self_bytes[i];
      t.selfC[i] = T.self_count[i];
    }
    if (diff) {
      t.selfB2 = Float64Array.from(T.base_self_bytes);
      t.selfC2 = Float64Array.from(T.base_self_count);
      t.bytes2 = new Float64Array(n);
      t.count2 = new Float64Array(n);
    }
    shape(t);
    sums(t);
    return t;
  }

  /* A view: the tree shown for a thread choice, and the map base node -> view node (-1: not shown). */
  function threadView(base, th) {
    if (!split) return { tree: base, map: null };
    return th >= 0 ? oneThread(base, th) : merged(base);
  }
  function oneThread(base, th) {
    var keep = [0], i, j, map = new Int32Array(base.n).fill(-1);
    for (i = 1; i < base.n; i++) if (base.thread[i] === th) keep.push(i);
    var t = alloc(keep.length, true);
    t.parent[0] = -1;
    t.loc[0] = -1;
    t.thread[0] = th;
    map[0] = 0;
    for (j = 1; j < keep.length; j++) {
      i = keep[j];
      map[i] = j;
      t.depth[j] = base.depth[i];
      t.parent[j] = map[base.parent[i]];
      t.loc[j] = base.loc[i];
      t.thread[j] = th;
      t.selfB[j] = base.selfB[i];
      t.selfC[j] = base.selfC[i];
    }
    shape(t);
    sums(t);
    return { tree: t, map: map };
  }
  /* All threads: nodes with the same location under the same merged parent become one. */
  function merged(base) {
    return regroup(base, null, null, false);
  }
  /*
   * A tree made of base's nodes: those keep[i] leaves out go with their subtrees, those
   * skip[i] marks give their children to their parent, and nodes with the same location
   * (and thread, withThread) under the same new parent become one.
   */
  function regroup(base, keep, skip, withThread) {
    var n = base.n, L1 = MP.nloc + 1, T1 = MP.nthreads + 1, mid = new Int32Array(n).fill(-1), ids = new Map();
    var mPar = [-1], mLoc = [-1], mTh = [-1], cnt = 1, i, j;
    mid[0] = 0;
    for (i = 1; i < n; i++) {
      if ((keep && !keep[i]) || mid[base.parent[i]] < 0) continue;
      if (skip && skip[i]) { mid[i] = mid[base.parent[i]]; continue; }
      var th = withThread ? base.thread[i] : -1;
      var mp = mid[base.parent[i]], key = (mp * L1 + base.loc[i] + 1) * T1 + th + 1, id = ids.get(key);
      if (id === undefined) {
        id = cnt++;
        ids.set(key, id);
        mPar.push(mp);
        mLoc.push(base.loc[i]);
        mTh.push(th);
      }
      mid[i] = id;
    }
    return assemble(base, cnt, mPar, mLoc, mTh, mid, withThread);
  }
  /*
   * A tree of cnt nodes (node j's parent mPar[j] < j, location mLoc[j], thread mTh[j]) that base
   * node i goes to (mid[i], -1: none), in preorder with children by bytes: the view and its map.
   */
  function assemble(base, cnt, mPar, mLoc, mTh, mid, withThread) {
    var n = base.n, i, j;
    var mB = new Float64Array(cnt), first = new Int32Array(cnt + 1), kids = new Int32Array(cnt), fill;
    for (i = 0; i < n; i++) if (mid[i] >= 0) mB[mid[i]] += base.selfB[i];
    for (j = cnt - 1; j > 0; j--) mB[mPar[j]] += mB[j];
    for (j = 1; j < cnt; j++) first[mPar[j] + 1]++;
    for (j = 0; j < cnt; j++) first[j + 1] += first[j];
    fill = first.slice(0, cnt);
    for (j = 1; j < cnt; j++) kids[fill[mPar[j]]++] = j;
    var pos = new Int32Array(cnt), stack = [0], k = 0, t = alloc(cnt, withThread);
    while (stack.length) {
      j = stack.pop();
      pos[j] = k;
      if (k) {
        t.parent[k] = pos[mPar[j]];
        t.depth[k] = t.depth[t.parent[k]] + 1;
      } else t.parent[k] = -1;
      if (withThread) t.thread[k] = mTh[j];
      t.loc[k++] = mLoc[j];
      var c = Array.prototype.slice.call(kids, first[j], first[j + 1]);
      c.sort(function (a, b) { return mB[b] - mB[a] || a - b; });
      for (var q = c.length - 1; q >= 0; q--) stack.push(c[q]);
    }
    if (base.selfB2) {
      t.selfB2 = new Float64Array(cnt);
      t.selfC2 = new Float64Array(cnt);
      t.bytes2 = new Float64Array(cnt);
      t.count2 = new Float64Array(cnt);
    }
    var map = new Int32Array(n).fill(-1);
    for (i = 0; i < n; i++) {
      if (mid[i] < 0) continue;
      map[i] = pos[mid[i]];
      t.selfB[map[i]] += base.selfB[i];
      t.selfC[map[i]] += base.selfC[i];
      if (base.selfB2) { t.selfB2[map[i]] += base.selfB2[i]; t.selfC2[map[i]] += base.selfC2[i]; }
    }
    shape(t);
    sums(t);
    return { tree: t, map: map };
  }
  /*
   * Several processes: each one's frame is a child of the root. All of them apart: the
   * tree as it is; merged: without those frames, the same stacks made one; one process:
   * its frame's subtree.
   */
  var procs = MP.nprocs > 1;
  function procView(base, proc, apart) {
    if (!procs || (proc < 0 && apart)) return { tree: base, map: null };
    var keep = new Uint8Array(base.n), skip = new Uint8Array(base.n), p;
    keep[0] = 1;
    for (var i = 1; i < base.n; i++) {
      p = base.depth[i] === 1 ? MP.procOfLoc(base.loc[i]) : -1;
      skip[i] = p >= 0 ? 1 : 0;
      keep[i] = p >= 0 ? (proc < 0 || p === proc ? 1 : 0) : keep[base.parent[i]];
    }
    return regroup(base, keep, skip, split);
  }
  /* The view of a process and thread choice: the thread view of the process view. */
  function choiceView(base, proc, apart, th) {
    var pv = procView(base, proc, apart), tv = threadView(pv.tree, th), map;
    if (!pv.map) return tv;
    if (!tv.map) return { tree: tv.tree, map: pv.map };
    map = new Int32Array(base.n);
    for (var i = 0; i < base.n; i++) map[i] = pv.map[i] < 0 ? -1 : tv.map[pv.map[i]];
    return { tree: tv.tree, map: map };
  }

  /*
   * ---- folded stacks (memprof(1), FRAMES): a Python program's Python frames and the native code they
   * call; the interpreter's frames and start-up's left out, stacks without a Python frame under
   * [python interpreter]. The same rule as every other report, node by node: a node's own allocations
   * go where their stack, folded, ends.
   */
  var FOLD = d.fold && (d.locations || {})['class'] ? { cls: d.locations['class'], group: d.fold.group } : null;
  var HIDDEN = 1, PYTHON = 2, INTERPRETER = 4, PROCESS = 8;
  function folded(base) {
    var n = base.n, cls = FOLD.cls, G = FOLD.group, L1 = MP.nloc + 1, T1 = MP.nthreads + 2;
    var keep = new Int32Array(n), grp = new Int32Array(n).fill(-2), has = new Uint8Array(n), mid = new Int32Array(n);
    var ids = new Map(), par = [-1], loc = [-1], th = [-1], cnt = 1, i;
    function thread(i) { return split ? base.thread[i] : -1; }
    function child(p, l, t) {
      var key = (p * L1 + l + 1) * T1 + t + 1, id = ids.get(key);
      if (id === undefined) { id = cnt++; ids.set(key, id); par.push(p); loc.push(l); th.push(t); }
      return id;
    }
    /*
     * The node of i's path, folded, under [python interpreter] (stacks without a Python frame),
     * which is inside a process's frame when stacks start with one.
     */
    function group(i) {
      if (grp[i] === -2) {
        var p = base.parent[i], c = cls[base.loc[i]], g;
        if (p === 0 && (c & PROCESS)) return (grp[i] = child(child(0, base.loc[i], thread(i)), G, thread(i)));
        g = p === 0 ? child(0, G, thread(i)) : group(p);
        grp[i] = c & HIDDEN ? g : child(g, base.loc[i], thread(i));
      }
      return grp[i];
    }
    for (i = 1; i < n; i++) {
      var p = base.parent[i], c = base.loc[i] >= 0 ? cls[base.loc[i]] | 0 : 0;
      has[i] = has[p] | (c & PYTHON ? 1 : 0) | (c & INTERPRETER ? 2 : 0);
      keep[i] = c & HIDDEN ? keep[p] : child(keep[p], base.loc[i], thread(i));
      /* The interpreter's frames and no Python one: [python interpreter] is the outermost frame. */
      mid[i] = has[i] !== 2 ? keep[i] : !d.inverted ? group(i) :
        c & PROCESS ? child(child(keep[p], G, thread(i)), base.loc[i], thread(i)) : child(keep[i], G, thread(i));
    }
    /* Only the nodes some stack ends at, and their callers. */
    var used = new Uint8Array(cnt), renum = new Int32Array(cnt), m = 0, j;
    for (i = 0; i < n; i++) used[mid[i]] = 1;
    for (j = cnt - 1; j > 0; j--) if (used[j]) used[par[j]] = 1;
    var uPar = [], uLoc = [], uTh = [];
    for (j = 0; j < cnt; j++) {
      if (!used[j]) continue;
      renum[j] = m++;
      uPar.push(j ? renum[par[j]] : -1);
      uLoc.push(loc[j]);
      uTh.push(th[j]);
    }
    for (i = 0; i < n; i++) mid[i] = renum[mid[i]];
    return assemble(base, m, uPar, uLoc, uTh, mid, split);
  }

  /* ---- temporal: values for a window of buckets [b0, b1], from the interval records ---- */
  var TL = d.temporal ? d.timeline : null, IV = null;
  if (TL) {
    var iv = TL.intervals;
    IV = { node: Int32Array.from(iv.node), alloc: Int32Array.from(iv.alloc), free: Int32Array.from(iv.free),
      count: Float64Array.from(iv.count), bytes: Float64Array.from(iv.bytes) };
  }
  /* Sets base.selfB/selfC for the window; returns the snapshot shown (peak mode) or -1. */
  function windowValues(base, b0, b1) {
    var r, m = IV.node.length, A = IV.alloc, F = IV.free, N = IV.node, best = -1, lo, hi;
    base.selfB.fill(0);
    base.selfC.fill(0);
    if (d.mode === 'leaks') {
      lo = 2 * b0;
      hi = 2 * b1 + 1;
      for (r = 0; r < m; r++) {
        if (A[r] >= lo && A[r] <= hi && (F[r] < 0 || F[r] > hi)) { base.selfB[N[r]] += IV.bytes[r]; base.selfC[N[r]] += IV.count[r]; }
      }
    } else {
      best = b0;
      for (var b = b0 + 1; b <= b1; b++) if (TL.hwm_bytes[b] > TL.hwm_bytes[best]) best = b;
      var s = 2 * best;
      for (r = 0; r < m; r++) {
        if (A[r] <= s && (F[r] < 0 || F[r] > s)) { base.selfB[N[r]] += IV.bytes[r]; base.selfC[N[r]] += IV.count[r]; }
      }
    }
    return best;
  }
  function project(base, v) {
    var t = v.tree;
    if (!v.map) { sums(t); return; }
    t.selfB.fill(0);
    t.selfC.fill(0);
    for (var i = 0; i < base.n; i++) {
      var j = v.map[i];
      if (j >= 0) { t.selfB[j] += base.selfB[i]; t.selfC[j] += base.selfC[i]; }
    }
    sums(t);
  }

  /* ---- state ---- */
  var base = baseTree();
  var canvas = MP.$('fg-canvas'), wrap = MP.$('fg-wrap'), tip = MP.$('mp-tooltip');
  var S = { thread: -1, proc: -1, apart: !!d.split_processes, zoom: 0, flame: false, query: '', focus: -1, win: null,
    shown: -1, side: 'new', all: !FOLD || !!d.fold.all_frames };
  var view = null, hits = [], aggs = [], match = null, found = { frames: 0, bytes: 0 }, hay = null;
  var charW = 0, colorCache = null, colorTheme = '', H = 0, draws = 0, windows = 0;

  var chart = MP.chart(MP.$('mp-chart-host'), {
    onWindow: MP.debounce(function (b0, b1) { S.win = [b0, b1]; recompute(); }, 150)
  });

  function setView() {
    var f = FOLD && !S.all ? folded(base) : null, v = choiceView(f ? f.tree : base, S.proc, S.apart, S.thread);
    var map = v.map;
    if (f) {
      /* base -> folded -> process and thread view: one map from the base tree. */
      map = new Int32Array(base.n);
      for (var i = 0; i < base.n; i++) map[i] = !v.map ? f.map[i] : f.map[i] < 0 ? -1 : v.map[f.map[i]];
    }
    view = { tree: v.tree, map: map, labels: labelsOf(v.tree), all: S.all };
    if (TL) recompute(true);
    else computeMatch();
  }
  function recompute(quiet) {
    var t0 = performance.now(), w = S.win || [0, TL.hwm_bytes.length - 1];
    S.shown = windowValues(base, w[0], w[1]);
    project(base, view);
    computeMatch();
    var from = MP.time(TL.bucket_us[w[0]]), to = MP.time(TL.bucket_us[w[1] + 1]);
    if (S.shown >= 0) {
      chart.setMarker(TL.hwm_us[S.shown], TL.hwm_bytes[S.shown]);
      chart.info('Window ' + from + ' \u2013 ' + to + ': peak inside ' + MP.exact(TL.hwm_bytes[S.shown]) +
        ' at ' + MP.time(TL.hwm_us[S.shown]) + '; the graph shows the allocations live then.');
    } else {
      chart.setMarker(null);
      chart.info('Window ' + from + ' \u2013 ' + to + ': allocated inside it and not freed by its end: ' +
        MP.exact(sumSelf()) + '.');
    }
    windows++;
    MP.mark('lastWindowMs', performance.now() - t0);
    if (!quiet) draw();
  }
  function sumSelf() { var s = 0; for (var i = 0; i < base.n; i++) s += base.selfB[i]; return s; }

  /* ---- search ---- */
  function computeMatch() {
    var t0 = performance.now(), t = view.tree, q = S.query, i;
    if (!q) { match = null; found = { frames: 0, bytes: 0 }; return; }
    if (!hay) {
      hay = new Array(MP.nloc);
      for (i = 0; i < MP.nloc; i++) hay[i] = (MP.fn(i) + '\n' + MP.fileLine(i)).toLowerCase();
    }
    var lm = new Uint8Array(MP.nloc), frames = 0, bytes = 0;
    for (i = 0; i < MP.nloc; i++) lm[i] = hay[i].indexOf(q) >= 0 ? 1 : 0;
    match = new Uint8Array(t.n);
    for (i = 1; i < t.n; i++) if (lm[t.loc[i]] && t.bytes[i] > 0) { match[i] = 1; frames++; }
    for (i = 0; i < t.n;) {
      if (match[i]) { bytes += t.bytes[i]; i = t.end[i]; } else i++;
    }
    found = { frames: frames, bytes: bytes };
    MP.mark('lastSearchMs', performance.now() - t0);
  }

  /* ---- colours: by kind of source (file type) and module ---- */
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  function color(l) {
    var theme = document.documentElement.getAttribute('data-theme');
    if (!colorCache || colorTheme !== theme) {
      colorCache = new Array(MP.nloc);
      colorTheme = theme;
    }
    var c = colorCache[l];
    if (c) return c;
    var f = MP.file(l).toLowerCase(), fn = MP.fn(l), h = hash(MP.module(l) || f), hue, sat = MP.cssVar('--frame-s');
    var light = MP.cssVar('--frame-l');
    if (!f && (fn === '???' || /^0x[0-9a-f]+$/i.test(fn))) return (colorCache[l] = 'hsl(220, 6%, ' + light + ')');
    if (/\.(c|h)$/.test(f)) hue = 42 + h % 14;
    else if (/\.(cc|cpp|cxx|c\+\+|hh|hpp|hxx|tcc|ipp)$/.test(f) || f.indexOf('/c++/') >= 0) hue = 20 + h % 12;
    else if (/\.rs$/.test(f)) hue = 2 + h % 10;
    else if (f) hue = 95 + h % 45;
    else hue = 195 + h % 40;
    return (colorCache[l] = 'hsl(' + hue + ', ' + sat + ', ' + light + ')');
  }

  /* Differential: the new and the base capture's bytes of node i, whichever drives the widths. */
  function sides(i) {
    var t = view.tree;
    return S.side === 'new' ? { now: t.bytes[i], was: t.bytes2[i], nowC: t.count[i], wasC: t.count2[i] }
      : { now: t.bytes2[i], was: t.bytes[i], nowC: t.count2[i], wasC: t.count[i] };
  }
  /* Red for growth, blue for shrinkage, deeper with the change relative to the larger side; grey: none. */
  function diffColor(i) {
    var v = sides(i), light = MP.cssVar('--frame-l'), big = Math.max(v.now, v.was);
    if (v.now === v.was) return 'hsl(220, 4%, ' + light + ')';
    var sat = Math.round(25 + 65 * Math.abs(v.now - v.was) / big);
    return 'hsl(' + (v.now > v.was ? 2 : 215) + ', ' + sat + '%, ' + light + ')';
  }
  function change(now, was, fmt) {
    return (now > was ? '+' : now < was ? '\u2212' : '\u00b1') + fmt(Math.abs(now - was)) +
      (was > 0 ? ' (' + (now >= was ? '+' : '\u2212') + MP.pct(Math.abs(now - was), was) + ')' : '');
  }
  function swapSides() {
    var k;
    (view.tree === base ? [base] : [base, view.tree]).forEach(function (t) {
      ['selfB', 'selfC', 'bytes', 'count'].forEach(function (a) { k = t[a]; t[a] = t[a + '2']; t[a + '2'] = k; });
    });
    S.side = S.side === 'new' ? 'base' : 'new';
    sideBtn.textContent = S.side === 'new' ? 'Widths: new' : 'Widths: base';
    sideBtn.setAttribute('aria-pressed', String(S.side === 'base'));
    computeMatch();
    draw();
  }

  /* ---- drawing ---- */
  function rowY(r) { return S.flame ? H - (r + 1) * ROW : r * ROW; }
  function label(i) { return view.labels[i]; }
  /*
   * The boxes' names: a function's (a C++ one's template arguments elided); siblings of one
   * name that stand for different lines get each its line ("main:15", "main:17").
   */
  function labelsOf(t) {
    var lab = new Array(t.n), i, c;
    for (i = 0; i < t.n; i++) lab[i] = MP.shortFn(t.loc[i]);
    for (i = 0; i < t.n; i++) {
      if (t.end[i] - i < 3) continue;
      var lines = new Map(), mixed = new Set();
      for (c = i + 1; c < t.end[i]; c = t.end[c]) {
        var l = lines.get(lab[c]), n = MP.line(t.loc[c]);
        if (l === undefined) lines.set(lab[c], n);
        else if (l !== n) mixed.add(lab[c]);
      }
      if (!mixed.size) continue;
      for (c = i + 1; c < t.end[i]; c = t.end[c]) {
        if (mixed.has(MP.shortFn(t.loc[c])) && MP.line(t.loc[c]) > 0) lab[c] = MP.shortFn(t.loc[c]) + ':' + MP.line(t.loc[c]);
      }
    }
    return lab;
  }
  function fit(text, w) {
    var max = Math.floor((w - 6) / charW);
    if (text.length <= max) return text;
    var cut = max - 1, c = text.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut--;
    return text.slice(0, cut) + '\u2026';
  }

  function draw() {
    var t0 = performance.now(), t = view.tree, z = S.zoom, rows = t.sub[z] + 1, i, x, w;
    H = rows * ROW;
    var fc = MP.fitCanvas(canvas, H), ctx = fc[0], W = fc[1];
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    if (!charW) charW = ctx.measureText('MMMMMMMMMM').width / 10;
    var pal = {
      text: MP.cssVar('--frame-text'), match: MP.cssVar('--match'), anc: MP.cssVar('--ancestor'),
      agg: MP.cssVar('--aggregate'), focus: MP.cssVar('--focus'), fg: MP.cssVar('--fg')
    };
    hits = [];
    for (i = 0; i < rows; i++) hits.push([]);
    aggs = [];

    function box(id, x, w, r, fill, text) {
      var y = rowY(r);
      ctx.fillStyle = fill;
      ctx.fillRect(x, y, Math.max(1, w - 1), ROW - 1);
      if (text && w >= 3 * charW + 6) {
        ctx.fillStyle = pal.text;
        ctx.fillText(fit(text, w), x + 3, y + ROW / 2, w - 6);
      }
      hits[r].push(x, w, id);
    }

    var anc = [];
    for (i = t.parent[z]; i >= 0; i = t.parent[i]) anc.push(i);
    for (var a = anc.length - 1; a >= 0; a--) box(anc[a], 0, W, t.depth[anc[a]], pal.anc, label(anc[a]));

    var scale = t.bytes[z] > 0 ? W / t.bytes[z] : 0, stack = [z], xs = [0];
    while (stack.length) {
      i = stack.pop();
      x = xs.pop();
      w = i === z ? W : t.bytes[i] * scale;
      box(i, x, w, t.depth[i], match && match[i] ? pal.match : i ? (diff ? diffColor(i) : color(t.loc[i])) : pal.anc, label(i));
      var cx = x, runX = 0, runN = 0, runB = 0;
      for (var c = i + 1; c < t.end[i]; c = t.end[c]) {
        var cw = t.bytes[c] * scale;
        if (cw >= MINW) {
          if (runN) { aggregate(i, runX, cx - runX, runN, runB); runN = 0; }
          stack.push(c);
          xs.push(cx);
        } else if (cw > 0) {
          if (!runN) { runX = cx; runB = 0; }
          runN++;
          runB += t.bytes[c];
        }
        cx += cw;
      }
      if (runN) aggregate(i, runX, cx - runX, runN, runB);
    }

    function aggregate(p, ax, aw, n, b) {
      if (aw < 0.5) return;
      var r = t.depth[p] + 1, y = rowY(r);
      aggs.push({ parent: p, n: n, bytes: b });
      ctx.fillStyle = pal.agg;
      ctx.fillRect(ax, y, Math.max(1, aw - (aw > 2 ? 1 : 0)), ROW - 1);
      if (aw > 4) {
        ctx.save();
        ctx.beginPath();
        ctx.rect(ax, y, aw, ROW - 1);
        ctx.clip();
        ctx.strokeStyle = pal.fg;
        ctx.globalAlpha = 0.25;
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (var k = -ROW; k < aw; k += 5) { ctx.moveTo(ax + k, y + ROW - 1); ctx.lineTo(ax + k + ROW - 1, y); }
        ctx.stroke();
        ctx.restore();
      }
      hits[r].push(ax, aw, -aggs.length);
    }

    var f = document.activeElement === canvas ? rectOf(S.focus) : null;
    if (f) {
      ctx.strokeStyle = pal.focus;
      ctx.lineWidth = 2;
      ctx.strokeRect(f.x + 1, f.y + 1, Math.max(2, f.w - 3), ROW - 3);
    }
    draws++;
    MP.mark('lastDrawMs', performance.now() - t0);
    status();
  }

  function rectOf(id) {
    if (id < 0 || !view || id >= view.tree.n) return null;
    var r = view.tree.depth[id], row = hits[r];
    if (!row) return null;
    for (var k = 0; k < row.length; k += 3) if (row[k + 2] === id) return { x: row[k], w: row[k + 1], y: rowY(r) };
    return null;
  }
  function hitAt(px, py) {
    var r = S.flame ? Math.floor((H - 1 - py) / ROW) : Math.floor(py / ROW), row = hits[r];
    if (!row || py < 0 || py >= H) return null;
    for (var k = 0; k < row.length; k += 3) if (px >= row[k] && px < row[k] + row[k + 1]) return row[k + 2];
    return null;
  }

  /* ---- text: status lines, tooltips ---- */
  function status() {
    var t = view.tree, z = S.zoom, total = t.bytes[0], v = diff ? sides(z) : null;
    MP.$('fg-zoom-info').textContent = (z
      ? 'Zoomed into ' + label(z) + ': ' + MP.exact(t.bytes[z]) + ', ' + MP.pct(t.bytes[z], total) + ' of the total.'
      : (diff ? 'Total of the ' + S.side + ' capture: ' : 'Total: ') + MP.exact(total) + ' in ' +
        MP.plural(t.count[0], 'allocation', 'allocations') + '.') +
      (v ? ' New: ' + MP.exact(v.now) + ', base: ' + MP.exact(v.was) + ', change: ' + change(v.now, v.was, MP.exact) + '.' : '');
    MP.$('fg-search-info').textContent = S.query
      ? MP.plural(found.frames, 'matching frame', 'matching frames') + ' \u00b7 ' + MP.bytes(found.bytes) + ' = ' +
        MP.num(found.bytes) + ' B \u00b7 ' + MP.pct(found.bytes, total) + ' of the total'
      : '';
  }
  function describe(id) {
    var t = view.tree;
    if (id < 0) {
      var g = aggs[-id - 1];
      return [MP.plural(g.n, 'frame', 'frames') + ' too small to draw', MP.exact(g.bytes),
        MP.pct(g.bytes, t.bytes[0]) + ' of the total', 'under ' + label(g.parent)];
    }
    var l = t.loc[id], lines = [MP.fn(l)], p = t.parent[id];
    if (MP.fileLine(l)) lines.push(MP.fileLine(l));
    if (MP.module(l)) lines.push(MP.module(l));
    if (diff) {
      var v = sides(id);
      lines.push('new: ' + MP.exact(v.now) + ' in ' + MP.plural(v.nowC, 'allocation', 'allocations'));
      lines.push('base: ' + MP.exact(v.was) + ' in ' + MP.plural(v.wasC, 'allocation', 'allocations'));
      lines.push('change: ' + change(v.now, v.was, MP.exact));
    } else lines.push(MP.exact(t.bytes[id]));
    lines.push(MP.pct(t.bytes[id], t.bytes[0]) + ' of the total' + (p >= 0 ? ', ' + MP.pct(t.bytes[id], t.bytes[p]) + ' of its parent' : ''));
    if (!diff) lines.push(MP.plural(t.count[id], 'allocation', 'allocations'));
    if (split) lines.push('thread: ' + MP.threadLabel(t.thread ? t.thread[id] : -1));
    if (procs && S.proc >= 0) lines.push('process: ' + MP.procLabel(S.proc));
    return lines;
  }
  function showTip(id, cx, cy) {
    if (id === null) { tip.hidden = true; return; }
    var lines = describe(id);
    tip.textContent = '';
    tip.appendChild(MP.el('b', null, lines[0]));
    tip.appendChild(document.createTextNode(lines.slice(1).join('\n')));
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.max(4, Math.min(window.innerWidth - w - 4, cx + 14)) + 'px';
    tip.style.top = (cy + 18 + h > window.innerHeight ? cy - h - 10 : cy + 18) + 'px';
  }

  /* ---- navigation: thread and zoom live in the URL fragment ---- */
  function fragment(th, z, pr, apart) {
    var p = [];
    if (FOLD && S.all !== !!d.fold.all_frames) p.push('frames=' + (S.all ? 'all' : 'folded'));
    if (procs && pr >= 0) p.push('process=' + pr);
    if (procs && apart !== !!d.split_processes) p.push('apart=' + (apart ? 1 : 0));
    if (split && th >= 0) p.push('thread=' + th);
    if (z > 0) p.push('zoom=' + z);
    return p.join('&');
  }
  function go(th, z, pr, apart) {
    var h = fragment(th, z, pr === undefined ? S.proc : pr, apart === undefined ? S.apart : apart);
    if (location.hash.replace(/^#/, '') !== h) location.hash = h;
    apply();
  }
  function apply() {
    var p = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var e = kv.indexOf('=');
      if (e > 0) p[kv.slice(0, e)] = kv.slice(e + 1);
    });
    var th = split && /^\d+$/.test(p.thread || '') && +p.thread < MP.nthreads ? +p.thread : -1;
    var pr = procs && /^\d+$/.test(p.process || '') && +p.process < MP.nprocs ? +p.process : -1;
    var apart = procs && p.apart !== undefined ? p.apart === '1' : !!d.split_processes;
    S.all = !FOLD || (p.frames === 'all' ? true : p.frames === 'folded' ? false : !!d.fold.all_frames);
    allBox.checked = S.all;
    if (th !== S.thread || pr !== S.proc || apart !== S.apart || !view || view.all !== S.all) {
      S.thread = th;
      S.proc = pr;
      S.apart = apart;
      MP.$('fg-thread').value = th < 0 ? 'all' : String(th);
      MP.$('fg-process').value = pr < 0 ? 'all' : String(pr);
      MP.$('fg-apart').textContent = apart ? 'Processes: apart' : 'Processes: merged';
      MP.$('fg-apart').setAttribute('aria-pressed', String(apart));
      MP.$('fg-apart').disabled = pr >= 0;
      setView();
    }
    var z = /^\d+$/.test(p.zoom || '') ? +p.zoom : 0;
    S.zoom = z < view.tree.n ? z : 0;
    if (S.focus >= view.tree.n) S.focus = -1;
    draw();
  }
  window.addEventListener('hashchange', apply);

  /* ---- controls ---- */
  var orient = MP.$('fg-orient'), search = MP.$('fg-search'), threadSel = MP.$('fg-thread'), sideBtn = MP.$('fg-side');
  var allBox = MP.$('fg-all');
  if (FOLD) {
    /* memray's "Hide Irrelevant Frames", the other way round: checked shows them. */
    MP.$('fg-all-label').hidden = false;
    allBox.addEventListener('change', function () { S.all = allBox.checked; go(S.thread, 0); });
  }
  if (diff) {
    sideBtn.hidden = false;
    sideBtn.addEventListener('click', swapSides);
  }
  orient.addEventListener('click', function () {
    S.flame = !S.flame;
    orient.setAttribute('aria-pressed', String(S.flame));
    draw();
  });
  MP.$('fg-reset').addEventListener('click', function () { go(S.thread, 0); });
  function setQuery() {
    var q = search.value.trim().toLowerCase();
    if (q === S.query) return;
    S.query = q;
    computeMatch();
    draw();
  }
  search.addEventListener('input', MP.debounce(setQuery, 150));
  search.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') setQuery();
    if (e.key !== 'Escape') return;
    e.stopPropagation();
    if (search.value) { search.value = ''; setQuery(); } else search.blur();
  });
  if (split) {
    threadSel.appendChild(MP.el('option', { value: 'all' }, 'all threads'));
    for (var ti = 0; ti < MP.nthreads; ti++) threadSel.appendChild(MP.el('option', { value: String(ti) }, MP.threadLabel(ti)));
    threadSel.addEventListener('change', function () { go(threadSel.value === 'all' ? -1 : +threadSel.value, 0); });
  } else MP.$('fg-thread-label').hidden = true;
  if (procs) {
    var procSel = MP.$('fg-process'), apartBtn = MP.$('fg-apart');
    MP.$('fg-process-label').hidden = false;
    apartBtn.hidden = false;
    procSel.appendChild(MP.el('option', { value: 'all' }, 'all processes'));
    for (var pi = 0; pi < MP.nprocs; pi++) procSel.appendChild(MP.el('option', { value: String(pi) }, MP.procLabel(pi)));
    procSel.addEventListener('change', function () { go(S.thread, 0, procSel.value === 'all' ? -1 : +procSel.value); });
    apartBtn.addEventListener('click', function () { go(S.thread, 0, S.proc, !S.apart); });
  }
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && !e.defaultPrevented && S.zoom) go(S.thread, 0);
  });
  var notes = [];
  if (d.inverted) notes.push('Inverted: the first row holds the functions that allocated, each followed by its callers.');
  if (d.mode === 'temporary') notes.push('Allocations freed within ' + MP.plural(d.temporary_threshold, 'other allocation', 'other allocations') + '.');
  if (diff) notes.push('Differential: ' + (MP.meta.capture || 'the new capture') + ' against ' +
    ((d.base_meta || {}).capture || 'the base capture') + '; red grew, blue shrank, grey did not change.');
  if (d.mode === 'peak' && !d.temporal) notes.push('Memory live at the peak of the tracked heap: ' + MP.exact(MP.meta.peak_bytes || 0) + ' at ' + MP.time(MP.meta.peak_time_us || 0) + '.');
  if (d.mode === 'leaks') notes.push(d.temporal ? 'Memory allocated inside the chosen window and not freed by its end.' : 'Memory still allocated when tracking ended.');
  if (MP.meta.sampling_interval) notes.push('Every figure is estimated from a sample: ' + MP.sampled(MP.meta) + '.');
  MP.$('fg-note').textContent = notes.join(' ');

  canvas.addEventListener('click', function (e) {
    var r = canvas.getBoundingClientRect(), id = hitAt(e.clientX - r.left, e.clientY - r.top);
    if (id === null) return;
    tip.hidden = true;
    if (id < 0) id = aggs[-id - 1].parent;
    S.focus = id;
    if (id !== S.zoom) go(S.thread, id);
    else draw();
  });
  canvas.addEventListener('mousemove', function (e) {
    var r = canvas.getBoundingClientRect();
    showTip(hitAt(e.clientX - r.left, e.clientY - r.top), e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
  canvas.addEventListener('blur', function () { tip.hidden = true; draw(); });
  canvas.addEventListener('keydown', function (e) {
    var t = view.tree, f = S.focus >= 0 && S.focus < t.n ? S.focus : S.zoom, next = -1, c;
    var up = function () { return t.parent[f]; };
    var down = function () { for (c = f + 1; c < t.end[f]; c = t.end[c]) if (t.bytes[c] > 0) return c; return -1; };
    var p = t.parent[f];
    switch (e.key) {
      case 'ArrowUp': next = S.flame ? down() : up(); break;
      case 'ArrowDown': next = S.flame ? up() : down(); break;
      case 'ArrowRight':
        if (p >= 0 && f !== S.zoom) for (c = t.end[f]; c < t.end[p]; c = t.end[c]) if (t.bytes[c] > 0) { next = c; break; }
        break;
      case 'ArrowLeft':
        if (p >= 0 && f !== S.zoom) for (c = p + 1; c < f; c = t.end[c]) if (t.bytes[c] > 0) next = c;
        break;
      case 'Home': next = S.zoom; break;
      case 'Enter': case ' ':
        e.preventDefault();
        if (f !== S.zoom) go(S.thread, f);
        return;
      default: return;
    }
    e.preventDefault();
    if (next < 0) next = f;
    S.focus = next;
    draw();
    var fr = rectOf(next);
    MP.$('mp-announce').textContent = describe(next).join(', ') + (fr ? '' : ' (too small to draw)');
  });
  canvas.addEventListener('focus', function () {
    if (S.focus < 0) S.focus = S.zoom;
    draw();
  });

  /* ---- the test hook ---- */
  MP.hook('visibleFrames', function () {
    var out = [];
    hits.forEach(function (row) {
      var items = [];
      for (var k = 0; k < row.length; k += 3) if (row[k + 2] >= 0) items.push([row[k], row[k + 2]]);
      items.sort(function (a, b) { return a[0] - b[0]; });
      items.forEach(function (it) { out.push(label(it[1])); });
    });
    return out;
  });
  /* The client rectangle of the widest drawn frame with this label (or this name and a line), or null. */
  MP.hook('frameRect', function (name) {
    var best = null, cr = canvas.getBoundingClientRect();
    function named(s) { return s === name || (s.slice(0, name.length + 1) === name + ':' && /^\d+$/.test(s.slice(name.length + 1))); }
    hits.forEach(function (row, r) {
      for (var k = 0; k < row.length; k += 3) {
        if (row[k + 2] >= 0 && named(label(row[k + 2])) && (!best || row[k + 1] > best.width)) {
          best = { x: cr.left + row[k], y: cr.top + rowY(r), width: row[k + 1], height: ROW - 1 };
        }
      }
    });
    return best;
  });
  /* The aggregated boxes of frames too small to draw: client rectangle, parent's label, frames, bytes. */
  MP.hook('aggregates', function () {
    var out = [], cr = canvas.getBoundingClientRect();
    hits.forEach(function (row, r) {
      for (var k = 0; k < row.length; k += 3) {
        if (row[k + 2] >= 0) continue;
        var g = aggs[-row[k + 2] - 1];
        out.push({ x: cr.left + row[k], y: cr.top + rowY(r), width: row[k + 1], height: ROW - 1,
          parent: label(g.parent), n: g.n, bytes: g.bytes });
      }
    });
    return out;
  });
  MP.hook('tooltip', function () { return tip.hidden ? null : tip.textContent; });
  /* The stacks of the tree shown, as folded lines: each node with bytes of its own, its path's whole names. */
  MP.hook('paths', function () {
    var t = view.tree, out = [], names = [];
    for (var i = 1; i < t.n; i++) {
      names[t.depth[i]] = MP.fn(t.loc[i]);
      if (t.selfB[i] > 0) out.push(names.slice(1, t.depth[i] + 1).join(';') + ' ' + t.selfB[i]);
    }
    return out;
  });
  MP.hook('state', function () {
    var t = view.tree;
    return {
      zoom: S.zoom, zoomLabel: label(S.zoom), thread: S.thread, process: S.proc, apart: S.apart, flame: S.flame, query: S.query,
      allFrames: S.all,
      matchFrames: found.frames, matchBytes: found.bytes, rootBytes: t.bytes[0], zoomBytes: t.bytes[S.zoom],
      nodes: t.n, side: diff ? S.side : null, window: S.win || (TL ? [0, TL.hwm_bytes.length - 1] : null), chartWindow: chart.window(), snapshot: S.shown,
      windows: windows, draws: draws, theme: document.documentElement.getAttribute('data-theme')
    };
  });

  MP.onRedraw(draw);
  apply();
  MP.mark('firstDraw');
  requestAnimationFrame(function () { MP.mark('firstFrame'); });
  MP.publish();
})(MP);
