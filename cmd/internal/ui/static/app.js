// Courier's web UI: the live refresh of the regions marked data-live, and
// the dead table's "select all". The pages work without it.
(function () {
  'use strict';
  var body = document.body;
  var interval = parseInt(body.getAttribute('data-refresh'), 10) || 0;
  var indicator = document.getElementById('live');

  // "Select all" ticks every box of its form named by data-select-all.
  document.querySelectorAll('input[data-select-all]').forEach(function (all) {
    var name = all.getAttribute('data-select-all');
    all.hidden = false;
    all.addEventListener('change', function () {
      all.form.querySelectorAll('input[type="checkbox"][name="' + name + '"]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  });

  if (!interval || !indicator || !document.querySelector('[data-live][id]')) {
    return;
  }
  indicator.hidden = false;
  var timer = null;
  var busy = false;
  var ended = false;

  function show(text, state) {
    indicator.textContent = text;
    indicator.className = 'live ' + state;
  }

  function two(n) { return (n < 10 ? '0' : '') + n; }

  function clock(d) { return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds()); }

  // typing: the operator is in a field inside a live region, which a
  // refresh would replace.
  function typing() {
    var el = document.activeElement;
    return !!(el && el.closest && el.closest('[data-live]') && el.matches('input, textarea, select'));
  }

  function refresh() {
    if (busy || ended || typing()) {
      return;
    }
    busy = true;
    fetch(location.href, { headers: { 'X-Courier-Live': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.redirected && new URL(res.url).pathname === '/ui/login') {
          end();
          return null;
        }
        if (!res.ok) {
          throw new Error('status ' + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var doc = new DOMParser().parseFromString(html, 'text/html');
        document.querySelectorAll('[data-live][id]').forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh) {
            el.replaceWith(document.importNode(fresh, true));
          }
        });
        show('live · updated ' + clock(new Date()), 'on');
      })
      .catch(function () {
        show('live · update failed, retrying', 'failed');
      })
      .then(function () {
        busy = false;
      });
  }

  function start() {
    if (timer === null && !ended) {
      timer = setInterval(refresh, interval);
    }
  }

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  function end() {
    ended = true;
    stop();
    show('session ended', 'ended');
  }

  document.addEventListener('visibilitychange', function () {
    if (ended) {
      return;
    }
    if (document.visibilityState === 'visible') {
      refresh();
      start();
    } else {
      stop();
      show('paused', 'off');
    }
  });

  if (document.visibilityState === 'visible') {
    show('live', 'on');
    start();
  } else {
    show('paused', 'off');
  }
}());
