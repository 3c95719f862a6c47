/* memprof reports: the memory-over-time chart (RSS and tracked heap, peak, hover readout, CSV,
   and in temporal reports the draggable time window). */
(function (MP) {
  'use strict';
  var PAD = { l: 70, r: 14, t: 12, b: 24 }, HEIGHT = 170, UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  function trim(v) { return String(+v.toFixed(3)); }
  /* Index of the last element of the ascending array a that is <= v, or -1. */
  MP.floorIndex = function (a, v) {
    var lo = 0, hi = a.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] <= v) lo = mid + 1; else hi = mid; }
    return lo - 1;
  };

  /* opts.onWindow(b0, b1): called when the temporal window changes (bucket indices, inclusive). */
  MP.chart = function (host, opts) {
    var d = MP.data, m = MP.meta, mem = d.memory || {};
    var T = mem.time_us || [], rss = mem.rss || [], heap = mem.heap || [], hmax = mem.heap_max || null;
    /* A differential report: the base capture's memory too, on the same axes. */
    var bm = d.diff && d.base_memory ? d.base_memory : null, BT = bm ? bm.time_us || [] : [];
    var tl = d.temporal && d.timeline ? d.timeline : null, nb = tl ? tl.hwm_bytes.length : 0;
    var win = nb ? [0, nb - 1] : null, marker = null, hover = -1, drag = null, W = 0;

    var sec = MP.el('section', { class: 'mp-panel', 'aria-label': 'Memory over time' });
    var head = MP.el('div', { class: 'mp-row' });
    head.appendChild(MP.el('h2', null, 'Memory over time'));
    var readout = MP.el('span', { class: 'mp-readout', id: 'mp-chart-readout' });
    head.appendChild(readout);
    head.appendChild(MP.el('span', { class: 'mp-grow' }));
    var csvBtn = MP.el('button', { type: 'button', id: 'mp-chart-csv' }, 'Download CSV');
    head.appendChild(csvBtn);
    sec.appendChild(head);
    var box = MP.el('div');
    var canvas = MP.el('canvas', { class: 'mp-chart', id: 'mp-chart', role: 'img' });
    box.appendChild(canvas);
    sec.appendChild(box);
    var info = null, inStart = null, inEnd = null;
    if (nb) {
      var row = MP.el('div', { class: 'mp-row mp-window', id: 'mp-window' });
      var l1 = MP.el('label', null, 'Window start '), l2 = MP.el('label', null, 'end ');
      inStart = MP.el('input', { type: 'range', id: 'mp-win-start', min: 0, max: nb - 1, step: 1, value: 0 });
      inEnd = MP.el('input', { type: 'range', id: 'mp-win-end', min: 0, max: nb - 1, step: 1, value: nb - 1 });
      l1.appendChild(inStart);
      l2.appendChild(inEnd);
      row.appendChild(l1);
      row.appendChild(l2);
      var full = MP.el('button', { type: 'button', id: 'mp-win-full' }, 'Full range');
      row.appendChild(full);
      info = MP.el('span', { id: 'mp-win-info', 'aria-live': 'polite' });
      row.appendChild(info);
      sec.appendChild(row);
      sec.appendChild(MP.el('p', { class: 'mp-note' }, 'Drag across the chart, or move the sliders, to choose a time window.'));
      inStart.addEventListener('input', function () { setWindow(+inStart.value, Math.max(+inStart.value, win[1])); });
      inEnd.addEventListener('input', function () { setWindow(Math.min(win[0], +inEnd.value), +inEnd.value); });
      full.addEventListener('click', function () { setWindow(0, nb - 1); });
    }
    host.appendChild(sec);

    /*
     * The time axis ends at the last sample (of either capture), where the curves end: what comes
     * after it (the program's end after tracking stopped) has no points to draw. A temporal
     * report's last bucket runs to the end of tracking, and the axis with it.
     */
    var lastT = Math.max(T.length ? T[T.length - 1] : 0, BT.length ? BT[BT.length - 1] : 0);
    var xmax = Math.max(1, lastT || m.duration_us || 0, nb ? tl.bucket_us[nb] : 0, m.peak_time_us || 0);
    var ymax = Math.max(1024, m.peak_bytes || 0);
    [rss, heap, hmax || []].concat(bm ? [bm.rss || [], bm.heap || [], bm.heap_max || []] : []).forEach(function (a) {
      for (var i = 0; i < a.length; i++) if (a[i] > ymax) ymax = a[i];
    });
    ymax *= 1.08;
    canvas.setAttribute('aria-label', 'Memory over time: ' + (T.length ? MP.plural(T.length, 'sample', 'samples') : 'no samples') +
      (m.peak_bytes ? ', tracked heap peak ' + MP.bytes(m.peak_bytes) + ' at ' + MP.time(m.peak_time_us || 0) : ''));

    var T0 = T;
    function X(t) { return PAD.l + t / xmax * (W - PAD.l - PAD.r); }
    function Y(v) { return PAD.t + (1 - v / ymax) * (HEIGHT - PAD.t - PAD.b); }
    function timeAt(px) { return Math.max(0, Math.min(xmax, (px - PAD.l) / Math.max(1, W - PAD.l - PAD.r) * xmax)); }
    function bucketAt(px) { return Math.max(0, Math.min(nb - 1, MP.floorIndex(tl.bucket_us, timeAt(px)))); }

    /* A polyline that keeps the extremes of points sharing a pixel column (times: T, else ts). */
    function line(ctx, vals, close, ts) {
      var lastX = -1e9, lo = 0, hi = 0, lastY = 0, T = ts || T0;
      ctx.beginPath();
      for (var i = 0; i < T.length; i++) {
        var x = Math.round(X(T[i])), y = Y(vals[i]);
        if (i && x === lastX) { lo = Math.min(lo, y); hi = Math.max(hi, y); lastY = y; continue; }
        if (i && lo !== hi) { ctx.lineTo(lastX, lo); ctx.lineTo(lastX, hi); ctx.lineTo(lastX, lastY); }
        if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        lastX = x; lo = hi = lastY = y;
      }
      if (close && T.length) { ctx.lineTo(lastX, Y(0)); ctx.lineTo(Math.round(X(T[0])), Y(0)); ctx.closePath(); }
    }

    function axes(ctx) {
      var k = Math.min(UNITS.length - 1, Math.floor(Math.log(ymax) / Math.log(1024))), unit = Math.pow(1024, k);
      var ystep = niceStep(ymax / unit / 4) * unit, v, x;
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = MP.cssVar('--muted');
      ctx.strokeStyle = MP.cssVar('--grid');
      ctx.lineWidth = 1;
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      for (v = 0; v < ymax; v += ystep) {
        var y = Math.round(Y(v)) + 0.5;
        ctx.beginPath(); ctx.moveTo(PAD.l, y); ctx.lineTo(W - PAD.r, y); ctx.stroke();
        ctx.fillText(trim(v / unit) + ' ' + UNITS[k], PAD.l - 6, y);
      }
      var div = xmax >= 2e6 ? 1e6 : xmax >= 2000 ? 1000 : 1, name = div === 1e6 ? ' s' : div === 1000 ? ' ms' : ' \u00b5s';
      var xstep = niceStep(xmax / div / 6) * div;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      for (v = 0; v <= xmax; v += xstep) {
        x = Math.round(X(v)) + 0.5;
        ctx.beginPath(); ctx.moveTo(x, PAD.t); ctx.lineTo(x, HEIGHT - PAD.b); ctx.stroke();
        ctx.fillText(trim(v / div) + name, x, HEIGHT - PAD.b + 5);
      }
    }

    function dot(ctx, x, y, r, color) {
      ctx.fillStyle = color;
      ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill();
    }

    canvas.hidden = !T.length && !BT.length && !nb;
    function draw() {
      if (canvas.hidden) { readout.textContent = 'no memory samples'; return; }
      var fc = MP.fitCanvas(canvas, HEIGHT), ctx = fc[0];
      W = fc[1];
      axes(ctx);
      if (BT.length) {
        /* The base capture's, dashed under the new one's. */
        ctx.save();
        ctx.setLineDash([5, 4]);
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = MP.cssVar('--heap');
        line(ctx, bm.heap, false, BT);
        ctx.stroke();
        ctx.strokeStyle = MP.cssVar('--rss');
        line(ctx, bm.rss, false, BT);
        ctx.stroke();
        ctx.restore();
      }
      if (T.length) {
        ctx.fillStyle = MP.cssVar('--heap-fill');
        line(ctx, hmax || heap, true);
        ctx.fill();
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = MP.cssVar('--heap');
        line(ctx, heap, false);
        ctx.stroke();
        ctx.strokeStyle = MP.cssVar('--rss');
        line(ctx, rss, false);
        ctx.stroke();
      }
      var peakColor = MP.cssVar('--peak');
      if (m.peak_bytes) {
        var px = X(m.peak_time_us || 0), py = Y(m.peak_bytes);
        dot(ctx, px, py, 4, peakColor);
        ctx.font = '11px system-ui, sans-serif';
        ctx.textAlign = px > W - 120 ? 'right' : 'left';
        ctx.textBaseline = 'bottom';
        ctx.fillText('peak ' + MP.bytes(m.peak_bytes), px + (px > W - 120 ? -7 : 7), py - 2);
      }
      if (win) {
        var x0 = X(tl.bucket_us[win[0]]), x1 = X(tl.bucket_us[win[1] + 1]);
        ctx.fillStyle = MP.cssVar('--outside');
        ctx.fillRect(PAD.l, PAD.t, x0 - PAD.l, HEIGHT - PAD.t - PAD.b);
        ctx.fillRect(x1, PAD.t, W - PAD.r - x1, HEIGHT - PAD.t - PAD.b);
        ctx.fillStyle = MP.cssVar('--accent');
        ctx.fillRect(x0 - 1, PAD.t, 2, HEIGHT - PAD.t - PAD.b);
        ctx.fillRect(x1 - 1, PAD.t, 2, HEIGHT - PAD.t - PAD.b);
        if (marker) {
          var mx = X(marker[0]), my = Y(marker[1]);
          ctx.save(); ctx.translate(mx, my); ctx.rotate(Math.PI / 4);
          ctx.fillStyle = MP.cssVar('--accent'); ctx.fillRect(-4, -4, 8, 8);
          ctx.restore();
        }
      }
      if (hover >= 0) {
        var hx = Math.round(X(T[hover])) + 0.5;
        ctx.strokeStyle = MP.cssVar('--muted');
        ctx.beginPath(); ctx.moveTo(hx, PAD.t); ctx.lineTo(hx, HEIGHT - PAD.b); ctx.stroke();
        dot(ctx, hx, Y(rss[hover]), 3, MP.cssVar('--rss'));
        dot(ctx, hx, Y(heap[hover]), 3, MP.cssVar('--heap'));
      }
      var bk = hover >= 0 && BT.length ? MP.floorIndex(BT, T[hover]) : -1;
      readout.textContent = hover >= 0
        ? MP.time(T[hover]) + ' \u00b7 RSS ' + MP.bytes(rss[hover]) + ' \u00b7 heap ' + MP.bytes(heap[hover]) +
          (hmax ? ' (max ' + MP.bytes(hmax[hover]) + ' since the previous sample)' : '') +
          (bk >= 0 ? ' \u00b7 base: RSS ' + MP.bytes(bm.rss[bk]) + ', heap ' + MP.bytes(bm.heap[bk]) : '')
        : [T.length ? 'RSS (blue) and tracked heap (orange)' + (BT.length ? ', the base capture\'s dashed' : '') : 'no memory samples']
          .concat(m.peak_bytes ? ['heap peak ' + MP.bytes(m.peak_bytes) + ' at ' + MP.time(m.peak_time_us || 0)] : []).join('; ');
    }

    function setWindow(b0, b1) {
      b0 = Math.max(0, Math.min(nb - 1, b0));
      b1 = Math.max(b0, Math.min(nb - 1, b1));
      if (win[0] === b0 && win[1] === b1) return;
      win = [b0, b1];
      inStart.value = b0;
      inEnd.value = b1;
      MP.redrawAll();
      if (opts.onWindow) opts.onWindow(b0, b1);
    }

    function csv() {
      var header = ['time_us', 'rss_bytes', 'heap_bytes'].concat(hmax ? ['heap_max_bytes'] : []), rows = [];
      for (var i = 0; i < T.length; i++) rows.push(hmax ? [T[i], rss[i], heap[i], hmax[i]] : [T[i], rss[i], heap[i]]);
      return MP.csv(header, rows);
    }
    csvBtn.addEventListener('click', function () {
      MP.download('memprof-memory-' + (m.capture || 'report').replace(/[^A-Za-z0-9_.-]/g, '_') + '.csv', csv());
    });
    MP.hook('memoryCsv', csv);
    /* Where the axes end, and the points drawn: the capture's and, in a differential report, the base's. */
    MP.hook('chart', function () { return { xmax: xmax, ymax: ymax, samples: T.length, baseSamples: BT.length }; });

    function localX(e) { return e.clientX - canvas.getBoundingClientRect().left; }
    canvas.addEventListener('pointermove', function (e) {
      var x = localX(e);
      if (drag) {
        var b = bucketAt(x);
        if (drag.edge === 0) setWindow(Math.min(b, win[1]), win[1]);
        else if (drag.edge === 1) setWindow(win[0], Math.max(b, win[0]));
        else setWindow(Math.min(b, drag.anchor), Math.max(b, drag.anchor));
      }
      var k = MP.floorIndex(T, timeAt(x));
      if (k + 1 < T.length && (k < 0 || X(T[k + 1]) - x < x - X(T[k]))) k++;
      hover = x >= PAD.l && x <= W - PAD.r ? k : -1;
      MP.redrawAll();
    });
    canvas.addEventListener('pointerleave', function () { hover = -1; MP.redrawAll(); });
    if (nb) {
      canvas.style.cursor = 'col-resize';
      canvas.addEventListener('pointerdown', function (e) {
        var x = localX(e), x0 = X(tl.bucket_us[win[0]]), x1 = X(tl.bucket_us[win[1] + 1]);
        drag = Math.abs(x - x0) < 6 ? { edge: 0 } : Math.abs(x - x1) < 6 ? { edge: 1 } : { anchor: bucketAt(x) };
        if (!('edge' in drag)) setWindow(drag.anchor, drag.anchor);
        canvas.setPointerCapture(e.pointerId);
      });
      canvas.addEventListener('pointerup', function () { drag = null; });
      canvas.addEventListener('pointercancel', function () { drag = null; });
    }
    MP.onRedraw(draw);
    draw();
    return {
      draw: draw,
      window: function () { return win ? win.slice() : null; },
      setWindow: setWindow,
      /* The point the flame graph shows for the window (peak mode): [time_us, bytes] or null. */
      setMarker: function (t, bytes) { marker = t === null ? null : [t, bytes]; MP.redrawAll(); },
      /* The time the axis ends at, and the highest value it shows (for tests). */
      extent: function () { return { xmax: xmax, ymax: ymax }; },
      info: function (text) { if (info) info.textContent = text; }
    };
  };
})(MP);
