// The hosted link flow: the page's behaviour. It waits for the SDK's `init`
// message, then talks to /link/api/* with the session value in request
// bodies, and answers the parent window with {name, eventProperties}
// messages, only ever to the origin that sent `init` (docs/link.md).
// Its visible text comes from the strings table the page carries
// (internal/web/locales/link.json), in the language of init's `locale`.
(function () {
  'use strict';

  var root = document.getElementById('flow');
  var development = root.dataset.environment === 'development';
  var $ = function (id) { return document.getElementById(id); };

  // The developer the page was opened for (the SDK puts it in the URL):
  // /link was served with that developer's frame-ancestors, so the flow
  // opens that developer's sessions only.
  var urlClientId = new URLSearchParams(window.location.search).get('client_id');

  // Modes of the SDK's init that the flow knows besides none (null): "ui",
  // which knotapi-js sends by default. The flow has one way of working, so
  // a mode it does not know ("headless") is noted in the console and
  // otherwise ignored.
  var KNOWN_MODES = ['ui'];

  // --- Text ----------------------------------------------------------------
  var strings = {};
  try { strings = JSON.parse(root.dataset.strings || '{}'); } catch (e) { strings = {}; }
  var DEFAULT_LOCALE = 'en';
  var locale = DEFAULT_LOCALE;

  // localeOf picks the table for a BCP 47 tag by its language subtag
  // ("es-MX" → "es"); anything unknown is the default.
  function localeOf(tag) {
    if (typeof tag !== 'string') { return DEFAULT_LOCALE; }
    var lang = tag.trim().toLowerCase().split(/[-_]/)[0];
    return lang && lang !== DEFAULT_LOCALE && Object.prototype.hasOwnProperty.call(strings, lang) ? lang : DEFAULT_LOCALE;
  }

  function lookup(key, lang) {
    var table = strings[lang || locale] || {};
    if (Object.prototype.hasOwnProperty.call(table, key)) { return table[key]; }
    var fallback = strings[DEFAULT_LOCALE] || {};
    return Object.prototype.hasOwnProperty.call(fallback, key) ? fallback[key] : undefined;
  }

  // t is the text of key with its {placeholders} filled from vars, in the
  // flow's locale (or lang).
  function t(key, vars, lang) {
    var text = lookup(key, lang);
    if (text === undefined) { return key; }
    return text.replace(/\{([a-z]+)\}/g, function (m, name) {
      return vars && vars[name] !== undefined && vars[name] !== null ? String(vars[name]) : m;
    });
  }

  function count(prefix, n, vars) {
    vars = vars || {};
    vars.count = n;
    return t(prefix + (n === 1 ? '.one' : '.other'), vars);
  }

  // localize writes the text of every element that names a key, in the
  // flow's locale, with the chosen merchant's name.
  function localize() {
    var vars = { merchant: state.merchant ? state.merchant.name : '' };
    var set = function (attr, fn) {
      Array.prototype.forEach.call(document.querySelectorAll('[' + attr + ']'), function (el) {
        var key = el.getAttribute(attr);
        if (lookup(key) !== undefined) { fn(el, t(key, vars)); }
      });
    };
    set('data-t', function (el, text) { el.textContent = text; });
    set('data-t-label', function (el, text) { el.setAttribute('aria-label', text); });
    set('data-t-placeholder', function (el, text) { el.setAttribute('placeholder', text); });
    set('data-t-title', function (el, text) { el.setAttribute('title', text); });
  }

  function setLocale(tag) {
    locale = localeOf(tag);
    document.documentElement.lang = locale;
    document.title = t('title');
    localize();
  }

  // Seconds before expiry at which the flow asks the parent to extend the
  // session, and how long it waits for an init before saying so.
  var REFRESH_LEAD = 120;
  var INIT_WAIT = 8000;

  var state = {
    session: null,       // the session value: memory only, never in a URL
    clientId: null,
    parentOrigin: null,  // where init came from; every message goes there
    product: null,
    sessionId: null,
    entryPoint: null,
    metadata: {},        // the SDK's: echoed in events, sent with each login step
    allowed: [],         // merchant ids the session may link, by name
    searchIds: null,     // the ids of the last search (null: no search)
    category: '',
    merchant: null,      // {id, name}
    preselected: false,
    challenge: null,
    finished: false,
    timers: []
  };

  // --- Messages to the parent -------------------------------------------
  function post(name, props) {
    if (!state.parentOrigin) { return; }
    window.parent.postMessage({ name: name, eventProperties: props || {} }, state.parentOrigin);
  }

  function event(name, extra) {
    var props = {
      event: name,
      merchant: state.merchant ? state.merchant.name : null,
      merchantId: state.merchant ? state.merchant.id : null,
      sessionType: state.product,
      metaData: state.metadata
    };
    for (var k in extra) { if (Object.prototype.hasOwnProperty.call(extra, k)) { props[k] = extra[k]; } }
    post('event', props);
  }

  // --- Views ---------------------------------------------------------------
  var views = ['loading', 'start', 'merchants', 'login', 'otp', 'question', 'success', 'failure', 'unavailable', 'error'];

  function show(name, focusId) {
    views.forEach(function (v) {
      var el = $('view-' + v);
      if (el) { el.hidden = v !== name; }
    });
    $('back').hidden = !(name === 'login' || name === 'otp' || name === 'question') || state.preselected;
    var target = $(focusId || ('h-' + name));
    if (target) { target.focus(); }
  }

  function announce(text) {
    var status = $('status');
    status.textContent = '';
    window.setTimeout(function () { status.textContent = text; }, 30);
  }

  function setError(id, text) {
    var el = $(id);
    el.textContent = text || '';
    el.hidden = !text;
  }

  // --- Calls -----------------------------------------------------------------
  function call(path, body) {
    body.session = state.session;
    body.client_id = state.clientId;
    return fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store'
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) {
          var err = new Error(data.error_message || '');
          err.code = data.error_code || 'HTTP_' + resp.status;
          throw err;
        }
        return data;
      });
    });
  }

  // fail handles an error of any call: session errors end the flow. A
  // rate-limited call shows its message in errorId (the error paragraph of
  // the form that made it), when there is one.
  function fail(err, errorId) {
    switch (err.code) {
      case 'SESSION_EXPIRED':
        return fatal('Session_Expired', 'error.session_expired', 'error.start_again');
      case 'SESSION_NOT_FOUND':
        return fatal('Session_Not_Found', 'error.session_not_found', 'error.start_again');
      case 'CLIENT_ID_NOT_FOUND':
        return fatal('Client_ID_Not_Found', 'error.client', 'error.client.message');
      case 'RATE_LIMIT_EXCEEDED':
        if (errorId) {
          setError(errorId, t('rate_limited'));
        } else {
          announce(t('rate_limited'));
        }
        return null;
      default:
        // The API's messages are in English: other locales say it their way.
        return fatal('Unexpected_Error', 'error.title', 'error.retry', true,
          locale === DEFAULT_LOCALE && err.message ? err.message : null);
    }
  }

  // sessionError reports whether an error ends the flow whatever the call.
  function sessionError(err) {
    return err.code === 'SESSION_EXPIRED' || err.code === 'SESSION_NOT_FOUND' || err.code === 'CLIENT_ID_NOT_FOUND';
  }

  // fatal ends the flow on its error screen: titleKey and messageKey name
  // its text (shown is a message to show instead). The parent's error
  // message stays in English whatever the locale: the developer's code
  // reads it.
  function fatal(code, titleKey, messageKey, local, shown) {
    state.finished = true;
    clearTimers();
    $('h-error').textContent = t(titleKey);
    $('error-message').textContent = shown || t(messageKey);
    $('error-code').textContent = t('error.code', { code: code });
    show('error');
    if (!local) { post('error', { errorCode: code, message: t(titleKey, null, DEFAULT_LOCALE) + '. ' + t(messageKey, null, DEFAULT_LOCALE) }); }
    post('loadingFinished');
  }

  // --- Start -----------------------------------------------------------------
  function start(payload) {
    setLocale(payload.locale);
    if (typeof payload.mode === 'string' && KNOWN_MODES.indexOf(payload.mode) < 0 && window.console) {
      window.console.info('Hitch: the link flow has no mode "' + payload.mode.slice(0, 40) + '"; it runs as usual.');
    }
    if (typeof payload.sessionId !== 'string' || !payload.sessionId || typeof payload.clientId !== 'string' || !payload.clientId) {
      return fatal('Session_Not_Found', 'error.session_not_found', 'error.no_session');
    }
    state.session = payload.sessionId;
    state.clientId = payload.clientId;
    state.entryPoint = typeof payload.entryPoint === 'string' ? payload.entryPoint.slice(0, 100) : null;
    state.metadata = payload.metadata && typeof payload.metadata === 'object' && !Array.isArray(payload.metadata) ? payload.metadata : {};
    if (payload.useSearch === false) { $('search-box').hidden = true; }
    if (payload.useCategories === false) { $('categories').hidden = true; }
    var wanted = Array.isArray(payload.merchantIds) ? payload.merchantIds.map(Number).filter(function (n) { return n > 0; }) : [];

    call('/link/api/session', {}).then(function (s) {
      state.product = s.product;
      state.sessionId = s.session_id;
      state.allowed = s.merchant_ids;
      if (wanted.length) {
        state.allowed = s.merchant_ids.filter(function (id) { return wanted.indexOf(id) >= 0; });
        if (!state.allowed.length) {
          return fatal('MERCHANT_ID_NOT_FOUND', 'error.merchant', 'error.merchant.message');
        }
      }
      schedule(s.expires_in);
      var pre = s.merchant_id && state.allowed.indexOf(s.merchant_id) >= 0 ? s.merchant_id :
        (state.allowed.length === 1 ? state.allowed[0] : null);
      if (pre) {
        state.preselected = true;
        openLogin(merchantById(pre));
      } else {
        renderMerchants();
        show('merchants'); // the heading: no keyboard pops up on phones
      }
      post('loadingFinished');
    }).catch(fail);
  }

  // --- Session lifetime: ask for an extension shortly before expiry, then
  // check again when it was due. ------------------------------------------
  function clearTimers() {
    state.timers.forEach(window.clearTimeout);
    state.timers = [];
  }

  function schedule(expiresIn) {
    clearTimers();
    var refreshIn = Math.max(0, expiresIn - REFRESH_LEAD);
    state.timers.push(window.setTimeout(function () { event('refresh session request'); }, refreshIn * 1000));
    state.timers.push(window.setTimeout(recheck, (expiresIn + 1) * 1000));
  }

  function recheck() {
    if (state.finished) { return; }
    // The flow may end while the check is in flight: its answer then
    // changes nothing (no new timers, no expiry screen over an end screen).
    call('/link/api/session', {}).then(function (s) {
      if (!state.finished) { schedule(s.expires_in); }
    }).catch(function (err) {
      if (!state.finished) { fail(err); }
    });
  }

  // --- Merchants -------------------------------------------------------------
  var items = Array.prototype.slice.call(document.querySelectorAll('#merchants li'));
  var byId = {};
  items.forEach(function (li) { byId[li.dataset.id] = li; });

  function merchantById(id) {
    var button = byId[id] && byId[id].querySelector('button');
    return { id: Number(id), name: button ? button.dataset.name : 'the merchant', logo: button ? button.querySelector('img').getAttribute('src') : null };
  }

  function renderMerchants() {
    var ids = state.searchIds || state.allowed;
    var allowed = {};
    state.allowed.forEach(function (id) { allowed[id] = true; });
    var list = $('merchants');
    var shown = 0;
    var inCategory = {};
    items.forEach(function (li) { li.hidden = true; });
    ids.forEach(function (id) {
      var li = byId[id];
      if (!li || !allowed[id]) { return; }
      if (!state.searchIds) { inCategory[li.dataset.category] = true; }
      if (state.category && li.dataset.category !== state.category) { return; }
      list.appendChild(li); // the server's order: by name, or by search
      li.hidden = false;
      shown++;
    });
    if (!state.searchIds) {
      Array.prototype.forEach.call(document.querySelectorAll('#categories .chip'), function (chip) {
        chip.hidden = chip.dataset.category !== '' && !inCategory[chip.dataset.category];
      });
    }
    $('no-results').hidden = shown > 0;
    return shown;
  }

  var searchTimer = null;
  var searchSeq = 0;
  $('search').addEventListener('input', function () {
    window.clearTimeout(searchTimer);
    var q = $('search').value;
    searchTimer = window.setTimeout(function () {
      var seq = ++searchSeq;
      if (!q.trim()) {
        setError('search-error', '');
        state.searchIds = null;
        announce(count('merchants.count', renderMerchants()));
        return;
      }
      call('/link/api/merchants', { search: q }).then(function (r) {
        if (seq !== searchSeq) { return; }
        setError('search-error', '');
        state.searchIds = r.merchant_ids;
        var n = renderMerchants();
        announce(n === 0 ? t('merchants.count.none') : count('merchants.count', n));
      }).catch(function (err) {
        if (seq !== searchSeq) { return; }
        if (sessionError(err)) { return fail(err); }
        // A failed search keeps the list as it was: the user may scroll
        // or type again.
        setError('search-error', t(err.code === 'RATE_LIMIT_EXCEEDED' ? 'search.rate_limited' : 'search.failed'));
      });
    }, 180);
  });

  $('categories').addEventListener('click', function (e) {
    var chip = e.target.closest('.chip');
    if (!chip) { return; }
    state.category = chip.dataset.category;
    Array.prototype.forEach.call(document.querySelectorAll('#categories .chip'), function (c) {
      c.setAttribute('aria-pressed', String(c === chip));
    });
    var n = renderMerchants();
    announce(count('categories.count', n, { category: chip.textContent || '' }));
  });

  $('merchants').addEventListener('click', function (e) {
    var button = e.target.closest('.merchant');
    if (!button) { return; }
    state.merchant = merchantById(button.dataset.id);
    event('merchant clicked');
    openLogin(state.merchant);
  });

  // --- Login -----------------------------------------------------------------
  function openLogin(m) {
    state.merchant = m;
    state.challenge = null;
    localize();
    var logo = $('login-logo');
    if (m.logo) { logo.src = m.logo; logo.hidden = false; } else { logo.hidden = true; }
    setError('login-error', '');
    $('login-form').reset();
    show('login', 'username');
  }

  function busy(buttonId, on) {
    var b = $(buttonId);
    b.disabled = on;
    b.setAttribute('aria-busy', String(on));
  }

  $('login-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var username = $('username');
    var password = $('password');
    username.removeAttribute('aria-invalid');
    password.removeAttribute('aria-invalid');
    if (!username.value || !password.value) {
      var missing = !username.value ? username : password;
      missing.setAttribute('aria-invalid', 'true');
      setError('login-error', t(!username.value ? 'login.missing_username' : 'login.missing_password'));
      missing.focus();
      return;
    }
    var body = {
      merchant_id: state.merchant.id,
      username: username.value,
      password: password.value,
      entry_point: state.entryPoint,
      metadata: state.metadata
    };
    password.value = ''; // the page keeps no credentials
    setError('login-error', '');
    busy('login-submit', true);
    announce(t('login.progress', { merchant: state.merchant.name }));
    event('login started');
    call('/link/api/login', body).then(outcome).catch(function (err) { fail(err, 'login-error'); })
      .then(function () { busy('login-submit', false); });
  });

  function answer(formInput, submitId, errorId) {
    var input = $(formInput);
    if (!input.value.trim()) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    input.removeAttribute('aria-invalid');
    var body = { challenge: state.challenge, answer: input.value.trim(), entry_point: state.entryPoint, metadata: state.metadata };
    input.value = '';
    busy(submitId, true);
    announce(t('checking'));
    call('/link/api/answer', body).then(outcome).catch(function (err) {
      if (err.code === 'INVALID_FIELD') { // the challenge expired: log in again
        openLogin(state.merchant);
        setError('login-error', t('challenge.expired'));
        return;
      }
      fail(err, errorId);
    }).then(function () { busy(submitId, false); });
  }

  $('otp-form').addEventListener('submit', function (e) { e.preventDefault(); answer('otp', 'otp-submit', 'otp-error'); });
  $('question-form').addEventListener('submit', function (e) { e.preventDefault(); answer('answer', 'question-submit', 'question-error'); });

  // A step's message for the person is the flow's own, in its locale, from
  // the step's status and reason: the API's message is English.
  var FAILURE_KEYS = { 'credentials': 'failure.credentials', 'account': 'failure.account', 'too many attempts': 'failure.too_many_attempts' };

  function failureText(r, vars) {
    var known = typeof r.reason === 'string' && Object.prototype.hasOwnProperty.call(FAILURE_KEYS, r.reason);
    return t(known ? FAILURE_KEYS[r.reason] : 'failure.other', vars);
  }

  function tries(r) {
    return typeof r.attempts_left === 'number' ? ' ' + count('tries', r.attempts_left) : '';
  }

  // outcome shows where a login stands after a step.
  function outcome(r) {
    state.challenge = r.challenge || null;
    var vars = { merchant: r.merchant && r.merchant.name };
    switch (r.status) {
      case 'success':
        state.finished = true;
        clearTimers();
        event('authenticated', { taskId: r.task_id === undefined ? null : r.task_id });
        post('success', { merchant: r.merchant.name, merchantId: r.merchant.id, product: r.product, taskId: r.task_id === undefined ? null : r.task_id });
        $('success-message').textContent = t('success.message', vars);
        show('success');
        announce(t('success.message', vars));
        return;
      case 'otp_required':
        $('otp-message').textContent = t('otp.message', vars);
        setError('otp-error', r.wrong ? t('otp.wrong') + tries(r) : '');
        if (!r.wrong) { event('otp required'); }
        show('otp', 'otp');
        if (r.wrong) { $('otp').setAttribute('aria-invalid', 'true'); }
        return;
      case 'questions_required':
        $('question-message').textContent = t('question.message', vars);
        $('question-text').textContent = r.question;
        setError('question-error', r.wrong ? t('question.wrong') + tries(r) : '');
        if (!r.wrong) { event('security questions required'); }
        show('question', 'answer');
        if (r.wrong) { $('answer').setAttribute('aria-invalid', 'true'); }
        return;
      case 'failed':
        if (r.retry) {
          // The person tries again with the username they typed: only the
          // password is asked again.
          var username = $('username').value;
          openLogin(state.merchant);
          $('username').value = username;
          setError('login-error', failureText(r, vars));
          $('password').focus();
          return;
        }
        // An end screen: no later expiry check may replace it.
        state.finished = true;
        clearTimers();
        $('failure-message').textContent = failureText(r, vars);
        $('failure-back').hidden = state.preselected;
        show('failure');
        return;
      case 'pending':
        // A connector is still at the merchant, or waits its turn: wait
        // again, with the step's challenge.
        return call('/link/api/wait', { challenge: state.challenge, entry_point: state.entryPoint, metadata: state.metadata }).then(outcome);
      case 'unavailable':
        state.finished = true;
        clearTimers();
        $('unavailable-message').textContent = t('unavailable.message', vars);
        show('unavailable');
        post('error', { errorCode: 'Login_Unavailable', message: r.message });
        return;
    }
  }

  // --- Navigation ------------------------------------------------------------
  function backToMerchants() {
    if (state.finished) { // from a failure: the session goes on, so do its timers
      state.finished = false;
      recheck();
    }
    state.merchant = null;
    state.challenge = null;
    renderMerchants();
    show('merchants');
  }

  function close() {
    clearTimers();
    if (state.parentOrigin) {
      post('close', state.product ? { product: state.product } : {});
      return;
    }
    window.location.reload(); // opened directly: start over
  }

  $('back').addEventListener('click', backToMerchants);
  $('failure-back').addEventListener('click', backToMerchants);
  ['close', 'success-done', 'failure-close', 'unavailable-close', 'error-close'].forEach(function (id) {
    $(id).addEventListener('click', close);
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && state.parentOrigin) { close(); }
  });

  // --- init --------------------------------------------------------------------
  // Until init says otherwise, the browser's language.
  setLocale(navigator.language);
  var embedded = window.parent !== window;
  var reloading = false;
  if (embedded) {
    window.addEventListener('message', function (e) {
      // One init, from the parent window only. Its origin is where every
      // answer goes; an opaque origin ("null") cannot be answered safely.
      if (state.parentOrigin || reloading || e.source !== window.parent) { return; }
      var d = e.data;
      if (!d || d.event !== 'init' || !d.payload || typeof d.payload !== 'object') { return; }
      if (e.origin === 'null') {
        setLocale(d.payload.locale);
        fatal('Unexpected_Error', 'error.sandboxed', 'error.sandboxed.message', true);
        return;
      }
      // The page was served with the frame-ancestors of its URL's
      // developer (none named: the environment's default). A session of
      // another developer loads the page again for that developer, so
      // that the browser checks the parent against that developer's
      // origins; the SDK posts init again when the frame loads.
      // A page opened without a client_id may be framed by anyone, so it
      // never runs a session itself.
      var clientId = d.payload.clientId;
      if (typeof clientId === 'string' && clientId && clientId !== urlClientId) {
        var target = null;
        try {
          if (clientId.length <= 255) { target = '/link?client_id=' + encodeURIComponent(clientId); }
        } catch (err) {
          target = null; // not encodable (a lone surrogate): no developer's
        }
        if (target) {
          reloading = true;
          window.location.replace(target);
          return;
        }
        state.parentOrigin = e.origin;
        setLocale(d.payload.locale);
        fatal('Client_ID_Not_Found', 'error.client', 'error.client.message');
        return;
      }
      state.parentOrigin = e.origin;
      start(d.payload);
    });
    window.setTimeout(function () {
      if (!state.parentOrigin) { $('loading-hint').hidden = false; }
    }, INIT_WAIT);
  } else if (development && $('start-form')) {
    show('start', 'start-session');
    $('start-form').addEventListener('submit', function (e) {
      e.preventDefault();
      var session = $('start-session').value.trim();
      var client = $('start-client').value.trim();
      $('start-session').value = '';
      show('loading');
      start({ sessionId: session, clientId: client });
    });
  } else {
    $('loading-hint').hidden = false;
    $('h-loading').textContent = t('loading.direct');
    root.querySelector('.spinner').hidden = true;
  }
})();
