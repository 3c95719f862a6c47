/* memprof table page: one row per allocation location, sorting, filtering, virtual scrolling, CSV. */
(function (MP) {
  'use strict';
  var d = MP.load(), R = d.rows || {}, n = (R.bytes || []).length, split = !!(d.split_threads && R.thread);
  var ROWH = 24, MAXH = 8e6, kinds = d.kinds || [];
  /*
   * Several processes: rows of each process; the fragment chooses one process
   * (#process=N) or all of them, apart (with a Process column) or merged.
   */
  var procs = MP.nprocs > 1 && !!R.process, P = { proc: -1, apart: !!d.split_processes };
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var e = kv.indexOf('='), k = kv.slice(0, e), v = kv.slice(e + 1);
    if (k === 'process' && /^\d+$/.test(v) && +v < MP.nprocs) P.proc = +v;
    if (k === 'apart') P.apart = v === '1';
  });
  if (procs && (P.proc >= 0 || !P.apart)) {
    /* The same location, allocator and thread of the processes chosen make one row. */
    var keyOf = new Map(), M = { thread: [], kind: [], location: [], bytes: [], count: [], process: [] };
    if (R.caller) M.caller = [];
    for (var r0 = 0; r0 < n; r0++) {
      if (P.proc >= 0 && R.process[r0] !== P.proc) continue;
      var key = R.location[r0] + ':' + R.kind[r0] + ':' + (split ? R.thread[r0] : -1) +
        (R.caller ? ':' + R.caller[r0] : ''), m0 = keyOf.get(key);
      if (m0 === undefined) {
        keyOf.set(key, m0 = M.bytes.length);
        M.thread.push(split ? R.thread[r0] : -1);
        M.kind.push(R.kind[r0]);
        M.location.push(R.location[r0]);
        if (R.caller) M.caller.push(R.caller[r0]);
        M.bytes.push(0);
        M.count.push(0);
        M.process.push(P.proc);
      }
      M.bytes[m0] += R.bytes[r0];
      M.count[m0] += R.count[r0];
    }
    R = M;
    n = R.bytes.length;
  }
  var procCol = procs && P.apart && P.proc < 0;

  MP.frame('table', [
    'One row per allocation location' + (split ? ', thread' : '') + ' and allocator: the memory ' +
      ({ peak: 'live at the peak of the tracked heap', leaks: 'still allocated when tracking ended',
        temporary: 'in temporary allocations' }[d.mode] || '') + '.',
    'Click a column header to sort by it (again to reverse). Text columns sort by their text, character by character.',
    'The filter keeps rows whose location, allocator' + (split ? ' or thread' : '') + ' contains the text (case-insensitive). ' +
      'The CSV holds the rows shown, in the order shown.'
  ]);
  MP.chart(MP.$('mp-chart-host'), {});

  /* Text of dictionary entries, computed once. */
  function texts(count, fn) { var a = new Array(count); for (var i = 0; i < count; i++) a[i] = fn(i); return a; }
  var locText = texts(MP.nloc, MP.where), threadText = texts(MP.nthreads, MP.threadLabel);
  var procText = texts(MP.nprocs, MP.procLabel);
  var kindText = texts(kinds.length, function (k) { return kinds[k]; });
  /* A site called from Python names its caller: one text per (site, caller). */
  var locCol = R.location, locDict = locText;
  if (R.caller) {
    var pairs = new Map();
    locCol = new Int32Array(n);
    locDict = [];
    for (var p = 0; p < n; p++) {
      var key = R.location[p] * (MP.nloc + 1) + R.caller[p] + 1, id = pairs.get(key);
      if (id === undefined) {
        id = locDict.length;
        pairs.set(key, id);
        locDict.push(locText[R.location[p]] + (R.caller[p] >= 0 ? ' called from ' + locText[R.caller[p]] : ''));
      }
      locCol[p] = id;
    }
  }

  /* Columns: dictionary columns sort by the rank of their text, numeric ones by value. */
  var COLS = [];
  if (procCol) COLS.push({ key: 'process', label: 'Process', col: R.process, dict: procText });
  if (split) COLS.push({ key: 'thread', label: 'Thread', col: R.thread, dict: threadText });
  COLS.push({ key: 'size', label: 'Size', col: R.bytes, num: true, fmt: MP.bytes });
  COLS.push({ key: 'allocator', label: 'Allocator', col: R.kind, dict: kindText });
  COLS.push({ key: 'count', label: 'Allocations', col: R.count, num: true, fmt: MP.num });
  COLS.push({ key: 'location', label: 'Location', col: locCol, dict: locDict });
  function cellText(c, i) { var v = c.col[i]; return c.num ? c.fmt(v) : c.dict[v] || '???'; }
  function sortKey(c) {
    if (c.key_) return c.key_;
    var k = new Float64Array(n), i;
    if (c.num) { for (i = 0; i < n; i++) k[i] = c.col[i]; } else {
      var ids = c.dict.map(function (_, j) { return j; }), rank = new Int32Array(c.dict.length);
      ids.sort(function (a, b) { return c.dict[a] < c.dict[b] ? -1 : c.dict[a] > c.dict[b] ? 1 : a - b; });
      ids.forEach(function (id, r) { rank[id] = r; });
      for (i = 0; i < n; i++) k[i] = rank[c.col[i]];
    }
    return (c.key_ = k);
  }

  var S = { sort: (split ? 1 : 0) + (procCol ? 1 : 0), desc: true, query: '', first: 0, sum: 0 };
  var all = new Uint32Array(n), order = all;
  for (var i0 = 0; i0 < n; i0++) all[i0] = i0;

  /* ---- DOM: header, scroller with a spacer and a pool of rows ---- */
  var host = MP.$('tb-table'), cols = (procCol ? '14em ' : '') + (split ? '14em ' : '') + '7em 9em 8em minmax(12em, 1fr)';
  host.style.setProperty('--tb-cols', cols);
  host.setAttribute('aria-colcount', String(COLS.length));
  var headRow = MP.el('div', { role: 'row', class: 'tb-grid tb-head', 'aria-rowindex': '1' });
  var heads = COLS.map(function (c, ci) {
    var h = MP.el('div', { role: 'columnheader', 'aria-sort': 'none', class: c.num ? 'tb-num' : '' });
    var b = MP.el('button', { type: 'button', id: 'tb-sort-' + c.key }, c.label);
    b.addEventListener('click', function () {
      if (S.sort === ci) S.desc = !S.desc; else { S.sort = ci; S.desc = !!c.num; }
      sortRows();
      scroll.scrollTop = 0;
      render();
    });
    h.appendChild(b);
    headRow.appendChild(h);
    return h;
  });
  var headGroup = MP.el('div', { role: 'rowgroup' });
  headGroup.appendChild(headRow);
  host.appendChild(headGroup);
  var scroll = MP.el('div', { class: 'tb-scroll', role: 'rowgroup', tabindex: '0', id: 'tb-scroll', 'aria-label': 'Rows' });
  var spacer = MP.el('div', { class: 'tb-spacer' });
  scroll.appendChild(spacer);
  host.appendChild(scroll);
  var pool = [];

  function sortRows() {
    var c = COLS[S.sort], k = sortKey(c), dir = S.desc ? -1 : 1, by = R.bytes;
    order.sort(function (a, b) { return (k[a] - k[b]) * dir || by[b] - by[a] || a - b; });
    heads.forEach(function (h, ci) { h.setAttribute('aria-sort', ci === S.sort ? (S.desc ? 'descending' : 'ascending') : 'none'); });
  }

  function applyFilter() {
    var q = S.query, i;
    if (!q) { order = all.slice(); } else {
      var hit = function (list) { return list.map(function (t) { return t.toLowerCase().indexOf(q) >= 0; }); };
      var lm = hit(locDict), km = hit(kindText), tm = split ? hit(threadText) : null, keep = [];
      var pm = procCol ? hit(procText) : null;
      for (i = 0; i < n; i++) {
        if (lm[locCol[i]] || km[R.kind[i]] || (tm && tm[R.thread[i]]) || (pm && pm[R.process[i]])) keep.push(i);
      }
      order = Uint32Array.from(keep);
    }
    S.sum = 0;
    for (i = 0; i < order.length; i++) S.sum += R.bytes[order[i]];
    sortRows();
  }

  function render() {
    var t0 = performance.now(), m = order.length, vh = scroll.clientHeight || 400, vis = Math.ceil(vh / ROWH) + 1;
    var total = m * ROWH, h = Math.min(total, MAXH), st = scroll.scrollTop, first, top, k;
    spacer.style.height = h + 'px';
    if (total <= MAXH) { first = Math.floor(st / ROWH); top = first * ROWH; } else {
      first = Math.round(st / Math.max(1, h - vh) * Math.max(0, m - vis + 1));
      top = st;
    }
    first = Math.max(0, Math.min(first, Math.max(0, m - vis + 1)));
    while (pool.length < vis) {
      var row = MP.el('div', { role: 'row', class: 'tb-grid tb-row' });
      COLS.forEach(function (c) { row.appendChild(MP.el('div', { role: 'cell', class: c.num ? 'tb-num' : '' })); });
      spacer.appendChild(row);
      pool.push(row);
    }
    for (k = 0; k < pool.length; k++) {
      var r = pool[k], idx = first + k;
      if (k >= vis || idx >= m) { r.hidden = true; continue; }
      var i = order[idx];
      r.hidden = false;
      r.style.top = (top + k * ROWH) + 'px';
      r.setAttribute('aria-rowindex', String(idx + 2));
      r.classList.toggle('tb-alt', idx % 2 === 1);
      for (var ci = 0; ci < COLS.length; ci++) {
        var cell = r.children[ci], text = cellText(COLS[ci], i);
        cell.textContent = text;
        if (COLS[ci].key === 'size') cell.title = MP.num(R.bytes[i]) + ' B';
        else if (COLS[ci].key === 'location') cell.title = text;
      }
    }
    S.first = first;
    var shown = Math.min(m, first + vis);
    MP.$('tb-status').textContent = (S.query ? MP.num(m) + ' of ' + MP.plural(n, 'row', 'rows') + ' match' : MP.plural(n, 'row', 'rows')) +
      ' \u00b7 ' + (MP.meta.sampling_interval ? 'estimated ' : '') + MP.exact(S.sum) +
      (m ? ' \u00b7 showing ' + MP.num(first + 1) + '\u2013' + MP.num(shown) : '');
    host.setAttribute('aria-rowcount', String(m + 1));
    MP.mark('lastRenderMs', performance.now() - t0);
  }

  function csv() {
    var header = (procCol ? ['process'] : []).concat(split ? ['thread_tid', 'thread_name'] : [],
      ['size_bytes', 'allocator', 'allocations', 'function', 'file', 'line', 'module']);
    var rows = [];
    if (R.caller) header.push('caller');
    for (var k = 0; k < order.length; k++) {
      var i = order[k], l = R.location[i], row = (procCol ? [MP.procLabel(R.process[i])] : [])
        .concat(split ? [MP.tid(R.thread[i]), MP.threadName(R.thread[i])] : []);
      row = row.concat([R.bytes[i], kinds[R.kind[i]] || '', R.count[i], MP.fn(l), MP.file(l), MP.line(l), MP.module(l)]);
      if (R.caller) row.push(R.caller[i] >= 0 ? MP.where(R.caller[i]) : '');
      rows.push(row);
    }
    return MP.csv(header, rows);
  }

  var filter = MP.$('tb-filter');
  var refilter = MP.debounce(function () {
    var q = filter.value.trim().toLowerCase();
    if (q === S.query) return;
    S.query = q;
    applyFilter();
    scroll.scrollTop = 0;
    render();
  }, 120);
  filter.addEventListener('input', refilter);
  filter.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && filter.value) { filter.value = ''; refilter(); }
  });
  MP.$('tb-csv').addEventListener('click', function () {
    MP.download('memprof-table-' + (MP.meta.capture || 'report').replace(/[^A-Za-z0-9_.-]/g, '_') + '.csv', csv());
  });
  scroll.addEventListener('scroll', function () { requestAnimationFrame(render); });
  if (procs) {
    /* Another choice of processes: the page made again from the fragment. */
    var procSel = MP.$('tb-process'), apartBtn = MP.$('tb-apart');
    var choose = function (pr, apart) {
      var f = [];
      if (pr >= 0) f.push('process=' + pr);
      if (apart !== !!d.split_processes) f.push('apart=' + (apart ? 1 : 0));
      location.hash = f.join('&');
      location.reload();
    };
    MP.$('tb-process-label').hidden = false;
    apartBtn.hidden = false;
    procSel.appendChild(MP.el('option', { value: 'all' }, 'all processes'));
    for (var pi = 0; pi < MP.nprocs; pi++) procSel.appendChild(MP.el('option', { value: String(pi) }, MP.procLabel(pi)));
    procSel.value = P.proc < 0 ? 'all' : String(P.proc);
    apartBtn.textContent = P.apart ? 'Processes: apart' : 'Processes: merged';
    apartBtn.setAttribute('aria-pressed', String(P.apart));
    apartBtn.disabled = P.proc >= 0;
    procSel.addEventListener('change', function () { choose(procSel.value === 'all' ? -1 : +procSel.value, P.apart); });
    apartBtn.addEventListener('click', function () { choose(P.proc, !P.apart); });
  }
  MP.onRedraw(render);

  MP.hook('csv', csv);
  MP.hook('visibleRows', function () {
    return pool.filter(function (r) { return !r.hidden; }).map(function (r) {
      return Array.prototype.map.call(r.children, function (c) { return c.textContent; });
    });
  });
  MP.hook('state', function () {
    return { sort: COLS[S.sort].key, desc: S.desc, query: S.query, rows: order.length, first: S.first,
      process: P.proc, apart: procCol,
      theme: document.documentElement.getAttribute('data-theme') };
  });

  applyFilter();
  render();
  MP.mark('firstDraw');
  requestAnimationFrame(function () { MP.mark('firstFrame'); });
  MP.publish();
})(MP);
