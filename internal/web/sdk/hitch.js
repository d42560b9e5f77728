/*! Hitch web SDK: opens the hosted link flow of the Hitch deployment that
 * served this script. No dependencies. docs/link.md describes it.
 *
 * The same class, options and callbacks as knotapi-js 1.1.1, so that pages
 * written for it work unchanged:
 *
 *   new HitchLink().open({
 *     sessionId, clientId, environment, merchantIds, entryPoint,
 *     useCategories, useSearch, metadata, locale, mode,
 *     onSuccess({merchant, merchantId, product, taskId}),
 *     onError({errorCode, errorDescription}),
 *     onEvent({event, merchant, merchantId, taskId, product, environment, metaData}),
 *     onExit({product})
 *   });
 *
 * window.KnotapiJS (and window.KnotapiJS.default) is the same class.
 */
(function (window, document) {
  'use strict';

  var script = document.currentScript;
  // The deployment is where this script came from: the flow is opened
  // there, and messages are accepted from there only.
  var deployment = script && script.src ? new URL(script.src, document.baseURI).origin : window.location.origin;
  var SHOW_ANYWAY_MS = 10000;

  function noop() {}

  // eventName turns a protocol event ("merchant clicked") into the SDK's
  // callback name (MERCHANT_CLICKED), as knotapi-js does.
  function eventName(name) {
    return String(name || '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[^a-zA-Z0-9]+/g, '_')
      .replace(/_{2,}/g, '_').replace(/^_+|_+$/g, '').toUpperCase();
  }

  // ERRORS are the flow's error codes as knotapi-js reports them to
  // onError, with its descriptions; other codes (Login_Unavailable) keep
  // the flow's code and message.
  var ERRORS = {
    Session_Not_Found: { code: 'INVALID_SESSION', message: 'The session ID is invalid.' },
    Session_Expired: { code: 'EXPIRED_SESSION', message: 'The session has expired.' },
    Client_ID_Not_Found: { code: 'INVALID_CLIENT_ID', message: 'The client ID is invalid.' },
    MERCHANT_ID_NOT_FOUND: { code: 'MERCHANT_ID_NOT_FOUND', message: 'Merchant ID is required in all SDKs.' }
  };

  // knotError is onError's argument for the flow's error message.
  function knotError(p) {
    var code = p.errorCode || 'UNKNOWN_ERROR';
    var known = Object.prototype.hasOwnProperty.call(ERRORS, code) ? ERRORS[code] : null;
    return {
      errorCode: known ? known.code : code,
      errorDescription: known ? known.message : (p.message || 'An unknown error occurred')
    };
  }

  function present(v) { return v !== null && v !== undefined; }

  // knotEvent is onEvent's argument for the flow's event message: the
  // fields knotapi-js passes, in its order, absent rather than null.
  function knotEvent(p, environment) {
    var metaData = p.metaData && typeof p.metaData === 'object' ? p.metaData : {};
    if (present(p.sendCard)) { metaData.sendCard = p.sendCard; }
    var e = { metaData: metaData, event: eventName(p.event) };
    if (present(p.merchant)) { e.merchant = p.merchant; }
    if (present(p.merchantId)) { e.merchantId = p.merchantId; }
    if (present(p.taskId)) { e.taskId = p.taskId; }
    if (present(p.sessionType)) { e.product = p.sessionType; }
    if (environment) { e.environment = environment; }
    return e;
  }

  function HitchLink(options) {
    if (!(this instanceof HitchLink)) { return new HitchLink(options); }
    this._origin = options && options.url ? new URL(options.url, document.baseURI).origin : deployment;
    this._frame = null;
  }

  // open mounts the flow in a full-screen iframe and posts it the session.
  // A missing or wrong sessionId or clientId is the flow's to report
  // (onError), as with knotapi-js.
  HitchLink.prototype.open = function (config) {
    config = config || {};
    this._teardown();
    var self = this;
    var origin = this._origin;
    var cb = {
      onSuccess: typeof config.onSuccess === 'function' ? config.onSuccess : noop,
      onError: typeof config.onError === 'function' ? config.onError : noop,
      onEvent: typeof config.onEvent === 'function' ? config.onEvent : noop,
      onExit: typeof config.onExit === 'function' ? config.onExit : noop
    };
    var analytics = config.analytics !== false;

    var frame = document.createElement('iframe');
    // The client_id (not a secret; never the session) lets /link answer
    // with the frame-ancestors of the developer's allowed origins.
    frame.src = origin + '/link?client_id=' + encodeURIComponent(typeof config.clientId === 'string' ? config.clientId : '');
    frame.title = 'Connect an account';
    frame.setAttribute('data-hitch-link', '');
    frame.style.cssText = 'position:fixed;top:0;left:0;width:100%;height:100%;border:0;margin:0;padding:0;' +
      'z-index:2147483647;background:transparent;color-scheme:normal;visibility:hidden';

    function show() {
      if (frame.style.visibility === 'visible') { return; }
      frame.style.visibility = 'visible';
      frame.focus();
    }

    function track(type, name) {
      if (!analytics) { return; }
      try {
        // The session value is a bearer secret: the analytics never carry it.
        fetch(origin + '/events', {
          method: 'POST', mode: 'cors', credentials: 'omit', keepalive: true,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: type, session_id: null, event: name })
        }).catch(noop);
      } catch (e) { /* analytics never break the flow */ }
    }

    function safe(fn, args) {
      try { fn.apply(null, args); } catch (e) { window.setTimeout(function () { throw e; }); }
    }

    var answered = false;

    // showAnyway shows the frame when the flow has not said it is ready,
    // and says in the console why that may be: most often a page whose
    // origin the developer has not allowed, so the browser refused to
    // frame the flow.
    function showAnyway() {
      if (!answered && window.console) {
        window.console.warn('Hitch: the link flow has not answered. If the console shows a frame-ancestors ' +
          'violation, allow this page\'s origin (' + window.location.origin + ') for client ' + config.clientId +
          ' in the dashboard (Link flow) or with PUT /link/allowed_origins.');
      }
      show();
    }

    function onMessage(e) {
      if (e.origin !== origin || e.source !== frame.contentWindow) { return; }
      var d = e.data;
      if (!d || typeof d.name !== 'string') { return; }
      answered = true;
      var p = d.eventProperties;
      // The callbacks get what knotapi-js passes them (docs/link.md).
      switch (d.name) {
        case 'loadingFinished':
          show();
          track('track', 'LOADING_FINISHED');
          break;
        case 'event':
          if (!p || typeof p !== 'object') { return; }
          track('track', eventName(p.event));
          safe(cb.onEvent, [knotEvent(p, config.environment)]);
          break;
        case 'success':
          track('track', 'SUCCESS');
          if (p) { safe(cb.onSuccess, [p]); }
          break;
        case 'error':
          show();
          track('track', 'ERROR');
          safe(cb.onError, [knotError(p && typeof p === 'object' ? p : {})]);
          break;
        case 'close':
          track('track', 'CLOSE');
          self._teardown();
          safe(cb.onExit, [p]);
          break;
      }
    }

    frame.addEventListener('load', function () {
      // Posted to the deployment's origin only: if the frame were navigated
      // elsewhere, the session would not follow.
      frame.contentWindow.postMessage({
        event: 'init',
        payload: {
          platform: 'Web',
          sessionId: config.sessionId,
          clientId: config.clientId,
          environment: config.environment || null,
          merchantIds: Array.isArray(config.merchantIds) ? config.merchantIds : [],
          entryPoint: config.entryPoint || null,
          useCategories: config.useCategories !== false,
          useSearch: config.useSearch !== false,
          mode: config.mode || 'ui',
          locale: config.locale || navigator.language || null,
          metadata: config.metadata || {}
        }
      }, origin);
    });

    this._previousFocus = document.activeElement;
    this._previousOverflow = document.documentElement.style.overflow;
    document.documentElement.style.overflow = 'hidden';
    this._onMessage = onMessage;
    window.addEventListener('message', onMessage);
    this._frame = frame;
    this._timer = window.setTimeout(showAnyway, SHOW_ANYWAY_MS);
    // The flow is modal: the page beneath leaves the focus order and the
    // accessibility tree until it closes (elements inert already stay so).
    this._inerted = [];
    for (var i = 0; i < document.body.children.length; i++) {
      var el = document.body.children[i];
      if (!el.inert) { el.inert = true; this._inerted.push(el); }
    }
    document.body.appendChild(frame);
    track('identify', 'OPEN');
    return this;
  };

  // close removes the flow without waiting for it (onExit is not called).
  HitchLink.prototype.close = function () { this._teardown(); };

  HitchLink.prototype._teardown = function () {
    if (!this._frame) { return; }
    window.removeEventListener('message', this._onMessage);
    window.clearTimeout(this._timer);
    if (this._frame.parentNode) { this._frame.parentNode.removeChild(this._frame); }
    this._frame = null;
    for (var i = 0; i < this._inerted.length; i++) { this._inerted[i].inert = false; }
    this._inerted = [];
    document.documentElement.style.overflow = this._previousOverflow || '';
    if (this._previousFocus && typeof this._previousFocus.focus === 'function') { this._previousFocus.focus(); }
  };

  window.HitchLink = HitchLink;
  // knotapi-js compatibility: `new KnotapiJS()` and `new KnotapiJS.default()`.
  HitchLink.default = HitchLink;
  window.KnotapiJS = HitchLink;
})(window, document);
