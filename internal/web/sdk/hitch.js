/*! Hitch web SDK: opens the hosted link flow of the Hitch deployment that
 * served this script. No dependencies. docs/link.md describes it.
 *
 *   new HitchLink().open({
 *     sessionId, clientId, environment, merchantIds, entryPoint,
 *     useCategories, useSearch, metadata, locale, mode,
 *     onSuccess(product, details), onError(product, errorCode, message),
 *     onEvent(product, event, merchant, merchantId, payload, taskId),
 *     onExit(product)
 *   });
 *
 * window.KnotapiJS (and window.KnotapiJS.default) is the same class, so
 * pages written for knotapi-js work unchanged.
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
  // callback name (MERCHANT_CLICKED).
  function eventName(name) {
    return String(name || '').trim().toUpperCase().replace(/[\s-]+/g, '_');
  }

  function HitchLink(options) {
    if (!(this instanceof HitchLink)) { return new HitchLink(options); }
    this._origin = options && options.url ? new URL(options.url, document.baseURI).origin : deployment;
    this._frame = null;
  }

  // open mounts the flow in a full-screen iframe and posts it the session.
  HitchLink.prototype.open = function (config) {
    if (!config || typeof config.sessionId !== 'string' || typeof config.clientId !== 'string') {
      throw new TypeError('HitchLink.open needs a config with sessionId and clientId strings');
    }
    this._teardown();
    var self = this;
    var origin = this._origin;
    var product = config.product || null;
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
    frame.src = origin + '/link?client_id=' + encodeURIComponent(config.clientId);
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
      var p = d.eventProperties && typeof d.eventProperties === 'object' ? d.eventProperties : {};
      switch (d.name) {
        case 'loadingFinished':
          show();
          track('track', 'LOADING_FINISHED');
          break;
        case 'event':
          product = p.sessionType || product;
          track('track', eventName(p.event));
          safe(cb.onEvent, [product, eventName(p.event), p.merchant, p.merchantId, p, p.taskId]);
          break;
        case 'success':
          product = p.product || product;
          track('track', 'SUCCESS');
          safe(cb.onSuccess, [product, p]);
          break;
        case 'error':
          show();
          track('track', 'ERROR');
          safe(cb.onError, [product, p.errorCode, p.message]);
          break;
        case 'close':
          track('track', 'CLOSE');
          self._teardown();
          safe(cb.onExit, [product]);
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
          product: product,
          merchantIds: Array.isArray(config.merchantIds) ? config.merchantIds : [],
          entryPoint: config.entryPoint || null,
          useCategories: config.useCategories !== false,
          useSearch: config.useSearch !== false,
          mode: config.mode || null,
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
