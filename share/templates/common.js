/* memprof reports: shared code (data, formatting, page frame, theme, statistics, CSV, test hook). */
/* Nothing from the data is ever parsed as markup: text goes through textContent and canvas fillText. */
var MP = (function () {
  'use strict';
  var MP = {};
  var hook = {};
  var timings = {};
  var redrawers = [];

  MP.$ = function (id) { return document.getElementById(id); };

  /* An element with attributes and text; never markup. */
  MP.el = function (tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'class') e.className = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  MP.fail = function (msg) {
    var b = MP.$('mp-error') || errorBox();
    b.textContent = msg;
    b.hidden = false;
    throw new Error(msg);
  };

  function errorBox() {
    var b = MP.el('div', { id: 'mp-error', class: 'mp-error', role: 'alert' });
    b.hidden = true;
    return document.body.insertBefore(b, document.body.firstChild);
  }

  MP.mark = function (name, value) { timings[name] = value === undefined ? performance.now() : value; };

  /* The test hook: read-only functions, published once the page is ready. */
  MP.hook = function (name, fn) { hook[name] = fn; };
  MP.publish = function () {
    hook.timings = function () { return Object.assign({}, timings); };
    Object.defineProperty(window, 'memprofDebug', { value: Object.freeze(hook) });
  };

  /* ---- data ---- */
  MP.load = function () {
    var d;
    try {
      d = JSON.parse(MP.$('memprof-data').textContent);
    } catch (e) {
      MP.fail('memprof: the report data is not valid JSON: ' + e.message);
    }
    if (!d || d.version !== 1) MP.fail('memprof: unsupported report data (version ' + (d && d.version) + ')');
    var S = d.strings || [], L = d.locations || {}, th = d.threads || {};
    var fn = L['function'] || [], file = L.file || [], line = L.line || [], mod = L.module || [];
    var short = L['short'] || fn;
    MP.data = d;
    MP.meta = d.meta || {};
    MP.nloc = fn.length;
    MP.str = function (i) { return i >= 0 && i < S.length ? S[i] : ''; };
    MP.fn = function (l) { return l < 0 ? 'total' : (S[fn[l]] || '???'); };
    /* The name a box shows: a C++ name's template arguments elided (the whole one is MP.fn). */
    MP.shortFn = function (l) { return l < 0 ? 'total' : (S[short[l]] || MP.fn(l)); };
    MP.file = function (l) { return l < 0 ? '' : S[file[l]] || ''; };
    MP.module = function (l) { return l < 0 ? '' : S[mod[l]] || ''; };
    MP.line = function (l) { return l < 0 ? 0 : line[l] || 0; };
    MP.fileLine = function (l) {
      var f = MP.file(l), n = MP.line(l);
      return f ? (n > 0 ? f + ':' + n : f) : '';
    };
    MP.where = function (l) {
      var fl = MP.fileLine(l);
      return MP.fn(l) + (fl ? ' at ' + fl : '');
    };
    MP.nthreads = (th.tid || []).length;
    MP.tid = function (t) { return (th.tid || [])[t]; };
    MP.threadName = function (t) { return S[(th.name || [])[t]] || ''; };
    MP.threadLabel = function (t) {
      if (t < 0 || t >= MP.nthreads) return 'all threads';
      var name = MP.threadName(t);
      return name ? name + ' (tid ' + MP.tid(t) + ')' : 'tid ' + MP.tid(t);
    };
    /* Several captures: their processes, each with its frame at the root of its stacks. */
    var P = d.processes || {}, ploc = P.location || [], procOf = new Map();
    MP.nprocs = (P.pid || []).length;
    ploc.forEach(function (l, p) { if (l >= 0) procOf.set(l, p); });
    MP.procOfLoc = function (l) { var p = procOf.get(l); return p === undefined ? -1 : p; };
    MP.procLabel = function (p) {
      if (p < 0 || p >= MP.nprocs) return 'all processes';
      return (S[(P.name || [])[p]] || '?') + ' (pid ' + P.pid[p] + ')';
    };
    MP.threadProc = function (t) { return (th.process || [])[t]; };
    return d;
  };

  /* ---- formatting ---- */
  MP.num = function (n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); };
  MP.bytes = function (n) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0, v = Math.abs(n);
    if (v < 1024) return Math.round(n) + ' B';
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (n < 0 ? '-' : '') + (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + units[i];
  };
  /* A sampled capture's words: "estimated from a sample, one allocation per 512 KiB allocated". */
  MP.sampled = function (m) {
    return 'estimated from a sample, one allocation per ' + (m.sampling_mixed ? 'up to ' : '') +
      MP.bytes(m.sampling_interval) + ' allocated' + (m.sampling_mixed ? ', each capture by its own' : '');
  };
  MP.exact = function (n) { return MP.bytes(n) + (Math.abs(n) >= 1024 ? ' (' + MP.num(n) + ' B)' : ''); };
  MP.pct = function (part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + '%' : '-'; };
  MP.time = function (us) {
    var s = us / 1e6;
    if (us === 0) return '0 s';
    if (Math.abs(us) < 1000) return Math.round(us) + ' \u00b5s';
    if (Math.abs(s) < 1) return (us / 1000).toPrecision(3) + ' ms';
    if (s < 60) return s.toFixed(2) + ' s';
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s - 3600 * h - 60 * m;
    return (h ? h + ' h ' : '') + m + ' min ' + r.toFixed(0) + ' s';
  };
  MP.plural = function (n, one, many) { return MP.num(n) + ' ' + (n === 1 ? one : many); };
  /* A command line as a shell would read it back. */
  MP.shellWords = function (argv) {
    return (argv || []).map(function (a) {
      return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
    }).join(' ');
  };

  /* ---- CSV (RFC 4180, CRLF); text fields starting like a spreadsheet formula get a leading ' ---- */
  MP.csvField = function (v) {
    if (typeof v === 'number') return String(v);
    var s = String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  };
  MP.csv = function (header, rows) {
    var out = [header.map(MP.csvField).join(',')];
    for (var i = 0; i < rows.length; i++) out.push(rows[i].map(MP.csvField).join(','));
    return out.join('\r\n') + '\r\n';
  };
  MP.download = function (name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    var a = MP.el('a', { href: url, download: name });
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  };

  MP.debounce = function (fn, ms) {
    var timer = 0;
    return function () {
      var args = arguments;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(null, args); }, ms);
    };
  };

  /* ---- storage that may not exist (file:// pages, sandboxed iframes) ---- */
  MP.store = {
    get: function (k) { try { return window.localStorage.getItem(k); } catch (e) { return null; } },
    set: function (k, v) { try { window.localStorage.setItem(k, v); } catch (e) { /* not available */ } }
  };

  /* Canvas colours follow the theme's CSS variables. */
  MP.cssVar = function (name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  };

  /* Redraw on theme changes and resizes, at most once per frame. */
  MP.onRedraw = function (fn) { redrawers.push(fn); };
  var pending = 0;
  MP.redrawAll = function () {
    if (pending) return;
    pending = requestAnimationFrame(function () {
      pending = 0;
      redrawers.forEach(function (f) { f(); });
    });
  };
  window.addEventListener('resize', MP.redrawAll);
  /* Also when the width changes without a window resize (a scroll bar appears). */
  if (window.ResizeObserver) {
    var lastWidth = -1;
    new ResizeObserver(function (entries) {
      var w = entries[0].contentRect.width;
      if (w !== lastWidth) { lastWidth = w; MP.redrawAll(); }
    }).observe(document.documentElement);
  }

  /* A 2D context sized for the device pixel ratio; returns [ctx, cssWidth]. */
  MP.fitCanvas = function (canvas, cssHeight) {
    var dpr = window.devicePixelRatio || 1, w = Math.max(1, canvas.parentNode.clientWidth);
    var pw = Math.round(w * dpr), ph = Math.round(cssHeight * dpr);
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
      canvas.style.height = cssHeight + 'px';
    }
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, cssHeight);
    return [ctx, w];
  };

  /* ---- page frame: title bar, theme, statistics ---- */
  function title(kind) {
    var d = MP.data;
    var what = { peak: 'peak memory', leaks: 'leaked memory', temporary: 'temporary allocations' }[d.mode] || d.mode;
    return (d.inverted ? 'inverted ' : '') + (d.temporal ? 'temporal ' : '') + kind + ': ' + what;
  }

  function initTheme() {
    var btn = MP.$('mp-theme'), mq = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
    function apply(t) {
      document.documentElement.setAttribute('data-theme', t);
      btn.setAttribute('aria-pressed', String(t === 'dark'));
      MP.redrawAll();
    }
    var saved = MP.store.get('memprof-theme');
    apply(saved === 'dark' || saved === 'light' ? saved : mq && mq.matches ? 'dark' : 'light');
    btn.addEventListener('click', function () {
      var t = document.documentElement.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
      MP.store.set('memprof-theme', t);
      apply(t);
    });
    if (mq && mq.addEventListener) {
      mq.addEventListener('change', function (e) {
        if (!MP.store.get('memprof-theme')) apply(e.matches ? 'dark' : 'light');
      });
    }
  }

  function statsRows() {
    var m = MP.meta, rows = [];
    function add(k, v) { if (v !== undefined && v !== null && v !== '') rows.push([k, v]); }
    add('Command', MP.shellWords(m.argv));
    add('PID', m.pid);
    add('Host', m.hostname);
    add('Started', m.start);
    if (m.duration_us !== undefined) add('Duration', MP.time(m.duration_us));
    add('Exit', m.exit);
    if (m.since_attach) add('Tracking', 'since attach: allocations made before it are not seen');
    if (m.sampling_interval) add('Sampling', MP.sampled(m) + ': every figure is an estimate');
    if (m.total_allocations !== undefined) add('Allocations', MP.num(m.total_allocations));
    if (m.total_bytes !== undefined) add('Allocated', MP.exact(m.total_bytes));
    if (m.peak_bytes !== undefined) add('Peak heap', MP.exact(m.peak_bytes) + ' at ' + MP.time(m.peak_time_us || 0));
    if (m.leaked_bytes !== undefined) add('Leaked', MP.exact(m.leaked_bytes) + ' in ' + MP.plural(m.leaked_blocks || 0, 'block', 'blocks'));
    if (m.since_attach || m.unknown_frees) add('Unknown frees', MP.num(m.unknown_frees || 0));
    if (MP.data.mode === 'temporary') add('Threshold', 'freed within ' + MP.plural(MP.data.temporary_threshold, 'other allocation', 'other allocations'));
    add('Capture', m.capture);
    if (MP.nprocs > 1) {
      var names = [];
      for (var p = 0; p < MP.nprocs; p++) names.push(MP.procLabel(p));
      add('Processes', names.join(', '));
    }
    add('Report by', m.tool);
    var bd = MP.data.bounds;
    if (bd) {
      add('Bounded', [bd.frames_merged ? MP.plural(bd.frames_merged, 'frame', 'frames') + ' merged into "[smaller frames]"' : '',
        bd.rows_merged ? MP.plural(bd.rows_merged, 'row', 'rows') + ' merged into "[smaller locations]"' : '',
        bd.bucket_halvings ? 'time windows ' + Math.pow(2, bd.bucket_halvings) + ' times coarser' : '']
        .filter(Boolean).join('; ') + ' (totals exact)');
    }
    return rows;
  }

  /* Builds the title bar, the error line, the statistics panel and the host of
     the memory chart (#mp-chart-host) into #mp-frame; kind names the report
     ("flame graph", "table"); help is a list of paragraphs. */
  MP.frame = function (kind, help) {
    var d = MP.data, host = MP.$('mp-frame');
    var bar = MP.el('header', { class: 'mp-bar' });
    bar.appendChild(MP.el('span', { class: 'mp-brand' }, 'memprof'));
    var h1 = MP.el('h1', { id: 'mp-title' }, title(kind));
    bar.appendChild(h1);
    if (d.split_threads) bar.appendChild(MP.el('span', { class: 'mp-badge' }, 'threads split'));
    if (MP.nprocs > 1) bar.appendChild(MP.el('span', { class: 'mp-badge' }, MP.nprocs + ' processes'));
    if (d.diff) bar.appendChild(MP.el('span', { class: 'mp-badge' }, 'differential'));
    if (MP.meta.since_attach) bar.appendChild(MP.el('span', { class: 'mp-badge' }, 'since attach'));
    if (MP.meta.sampling_interval || (d.base_meta || {}).sampling_interval) {
      bar.appendChild(MP.el('span', { class: 'mp-badge', id: 'mp-estimated',
        title: [MP.meta, d.base_meta].filter(function (m) { return m && m.sampling_interval; })
          .map(MP.sampled).join('; ') }, 'estimated'));
    }
    bar.appendChild(MP.el('span', { class: 'mp-grow' }));
    var sb = MP.el('button', { type: 'button', id: 'mp-stats-btn', 'aria-expanded': 'false', 'aria-controls': 'mp-stats' }, 'Statistics');
    bar.appendChild(sb);
    bar.appendChild(MP.el('button', { type: 'button', id: 'mp-theme', 'aria-pressed': 'false', title: 'Switch between light and dark' }, 'Dark theme'));
    host.appendChild(bar);
    host.appendChild(MP.$('mp-error') || errorBox());
    document.title = 'memprof \u2013 ' + title(kind) + (MP.meta.capture ? ' \u2013 ' + MP.meta.capture : '');

    var stats = MP.el('section', { id: 'mp-stats', class: 'mp-panel', 'aria-label': 'Statistics' });
    stats.hidden = true;
    var dl = MP.el('dl', { class: 'mp-stats', id: 'mp-stats-list' });
    statsRows().forEach(function (r) {
      dl.appendChild(MP.el('dt', null, r[0]));
      dl.appendChild(MP.el('dd', null, r[1]));
    });
    stats.appendChild(dl);
    var details = MP.el('details', { class: 'mp-help' });
    details.appendChild(MP.el('summary', null, 'Help'));
    help.forEach(function (p) { details.appendChild(MP.el('p', null, p)); });
    stats.appendChild(details);
    host.appendChild(stats);
    host.appendChild(MP.el('div', { id: 'mp-chart-host' }));
    sb.addEventListener('click', function () {
      stats.hidden = !stats.hidden;
      sb.setAttribute('aria-expanded', String(!stats.hidden));
    });
    initTheme();
  };

  return MP;
})();
