// The hosted link flow: the page's behaviour. It waits for the SDK's `init`
// message, then talks to /link/api/* with the session value in request
// bodies, and answers the parent window with {name, eventProperties}
// messages, only ever to the origin that sent `init` (docs/link.md).
(function () {
  'use strict';

  var root = document.getElementById('flow');
  var development = root.dataset.environment === 'development';
  var $ = function (id) { return document.getElementById(id); };

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
    metadata: {},
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

  function setNames(name) {
    Array.prototype.forEach.call(document.querySelectorAll('.merchant-name'), function (el) { el.textContent = name; });
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
          var err = new Error(data.error_message || 'The request failed.');
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
        return fatal('Session_Expired', 'This session has expired', 'Close this window and start again from the app.');
      case 'SESSION_NOT_FOUND':
        return fatal('Session_Not_Found', 'This session was not found', 'Close this window and start again from the app.');
      case 'CLIENT_ID_NOT_FOUND':
        return fatal('Client_ID_Not_Found', 'This app is not set up', 'The app opened the flow with an unknown client ID.');
      case 'RATE_LIMIT_EXCEEDED':
        if (errorId) {
          setError(errorId, 'Too many tries. Wait a few seconds, then try again.');
        } else {
          announce('Too many tries. Wait a few seconds, then try again.');
        }
        return null;
      default:
        return fatal('Unexpected_Error', 'Something went wrong', err.message || 'Please try again later.', true);
    }
  }

  // sessionError reports whether an error ends the flow whatever the call.
  function sessionError(err) {
    return err.code === 'SESSION_EXPIRED' || err.code === 'SESSION_NOT_FOUND' || err.code === 'CLIENT_ID_NOT_FOUND';
  }

  function fatal(code, title, message, local) {
    state.finished = true;
    clearTimers();
    $('h-error').textContent = title;
    $('error-message').textContent = message;
    $('error-code').textContent = 'Error code: ' + code;
    show('error');
    if (!local) { post('error', { errorCode: code, message: title + '. ' + message }); }
    post('loadingFinished');
  }

  // --- Start -----------------------------------------------------------------
  function start(payload) {
    if (typeof payload.sessionId !== 'string' || !payload.sessionId || typeof payload.clientId !== 'string' || !payload.clientId) {
      return fatal('Session_Not_Found', 'This session was not found', 'The app opened the flow without a session.');
    }
    state.session = payload.sessionId;
    state.clientId = payload.clientId;
    state.entryPoint = typeof payload.entryPoint === 'string' ? payload.entryPoint.slice(0, 100) : null;
    state.metadata = payload.metadata && typeof payload.metadata === 'object' ? payload.metadata : {};
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
          return fatal('MERCHANT_ID_NOT_FOUND', 'Merchant not available', 'None of the merchants the app asked for can be linked with this session.');
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
    call('/link/api/session', {}).then(function (s) { schedule(s.expires_in); }).catch(fail);
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
        announce(renderMerchants() + ' merchants');
        return;
      }
      call('/link/api/merchants', { search: q }).then(function (r) {
        if (seq !== searchSeq) { return; }
        setError('search-error', '');
        state.searchIds = r.merchant_ids;
        var n = renderMerchants();
        announce(n === 0 ? 'No merchant matches.' : n === 1 ? '1 merchant' : n + ' merchants');
      }).catch(function (err) {
        if (seq !== searchSeq) { return; }
        if (sessionError(err)) { return fail(err); }
        // A failed search keeps the list as it was: the user may scroll
        // or type again.
        setError('search-error', err.code === 'RATE_LIMIT_EXCEEDED' ? 'Too many searches. Wait a few seconds, then try again.' :
          'The search did not work. Try again, or pick from the list.');
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
    announce((chip.textContent || '') + ': ' + n + (n === 1 ? ' merchant' : ' merchants'));
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
    setNames(m.name);
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
      setError('login-error', !username.value ? 'Enter your username.' : 'Enter your password.');
      missing.focus();
      return;
    }
    var body = {
      merchant_id: state.merchant.id,
      username: username.value,
      password: password.value,
      entry_point: state.entryPoint
    };
    password.value = ''; // the page keeps no credentials
    setError('login-error', '');
    busy('login-submit', true);
    announce('Logging in to ' + state.merchant.name + '…');
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
    var body = { challenge: state.challenge, answer: input.value.trim(), entry_point: state.entryPoint };
    input.value = '';
    busy(submitId, true);
    announce('Checking…');
    call('/link/api/answer', body).then(outcome).catch(function (err) {
      if (err.code === 'INVALID_FIELD') { // the challenge expired: log in again
        openLogin(state.merchant);
        setError('login-error', err.message);
        return;
      }
      fail(err, errorId);
    }).then(function () { busy(submitId, false); });
  }

  $('otp-form').addEventListener('submit', function (e) { e.preventDefault(); answer('otp', 'otp-submit', 'otp-error'); });
  $('question-form').addEventListener('submit', function (e) { e.preventDefault(); answer('answer', 'question-submit', 'question-error'); });

  // outcome shows where a login stands after a step.
  function outcome(r) {
    state.challenge = r.challenge || null;
    switch (r.status) {
      case 'success':
        state.finished = true;
        clearTimers();
        event('authenticated', { taskId: r.task_id === undefined ? null : r.task_id });
        post('success', { merchant: r.merchant.name, merchantId: r.merchant.id, product: r.product, taskId: r.task_id === undefined ? null : r.task_id });
        $('success-message').textContent = r.message;
        show('success');
        announce(r.message);
        return;
      case 'otp_required':
        $('otp-message').textContent = r.wrong ? 'Enter the verification code ' + r.merchant.name + ' sent you.' : r.message;
        setError('otp-error', r.wrong ? r.message : '');
        if (!r.wrong) { event('otp required'); }
        show('otp', 'otp');
        if (r.wrong) { $('otp').setAttribute('aria-invalid', 'true'); }
        return;
      case 'questions_required':
        $('question-message').textContent = r.merchant.name + ' asks you to answer a security question.';
        $('question-text').textContent = r.question;
        setError('question-error', r.wrong ? r.message : '');
        if (!r.wrong) { event('security questions required'); }
        show('question', 'answer');
        if (r.wrong) { $('answer').setAttribute('aria-invalid', 'true'); }
        return;
      case 'failed':
        if (r.retry) {
          openLogin(state.merchant);
          $('username').value = '';
          setError('login-error', r.message);
          return;
        }
        // An end screen: no later expiry check may replace it.
        state.finished = true;
        clearTimers();
        $('failure-message').textContent = r.message;
        $('failure-back').hidden = state.preselected;
        show('failure');
        return;
      case 'unavailable':
        state.finished = true;
        clearTimers();
        $('unavailable-message').textContent = r.message;
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
      post('close');
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
  var embedded = window.parent !== window;
  if (embedded) {
    window.addEventListener('message', function (e) {
      // One init, from the parent window only. Its origin is where every
      // answer goes; an opaque origin ("null") cannot be answered safely.
      if (state.parentOrigin || e.source !== window.parent) { return; }
      var d = e.data;
      if (!d || d.event !== 'init' || !d.payload || typeof d.payload !== 'object') { return; }
      if (e.origin === 'null') {
        fatal('Unexpected_Error', 'This page cannot be opened here', 'The app opened the flow from a sandboxed page.', true);
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
    $('h-loading').textContent = 'Open this from an app';
    root.querySelector('.spinner').hidden = true;
  }
})();
