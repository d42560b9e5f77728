// The demo page: creates a session through the demo's server-side helper
// and opens the web SDK with it, listing the callbacks as they fire.
(function () {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var log = $('log');

  function entry(callback, args) {
    var li = document.createElement('li');
    li.dataset.callback = callback;
    var name = document.createElement('code');
    name.className = 'callback';
    name.textContent = callback;
    var time = document.createElement('time');
    time.textContent = new Date().toLocaleTimeString();
    var detail = document.createElement('pre');
    detail.textContent = JSON.stringify(args === undefined ? null : args, null, 1);
    li.appendChild(name);
    li.appendChild(time);
    li.appendChild(detail);
    log.insertBefore(li, log.firstChild);
  }

  function showError(text) {
    $('demo-error').textContent = text || '';
    $('demo-error').hidden = !text;
  }

  // The card switcher's card is the developer's server's to post: the
  // choice shows for that product only.
  var cardChoice = $('card-choice');
  function showCardChoice() { if (cardChoice) { cardChoice.hidden = $('type').value !== 'card_switcher'; } }
  $('type').addEventListener('change', showCardChoice);
  showCardChoice();

  // postCard does what the developer's server does after a card switcher
  // login: posts the card for the login's task, or, with no card chosen,
  // lets the task fail when its window ends.
  function postCard(taskId, number) {
    if (!taskId) { return; }
    if (!number) {
      entry('server: no card', { taskId: taskId, message: 'No card posted: CARD_FAILED follows when the card window ends (' +
        $('card-note').dataset.window + ').' });
      return;
    }
    fetch('/demo/card', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ task_id: taskId, number: number }),
      cache: 'no-store'
    }).then(function (resp) {
      return resp.json().then(function (data) {
        entry(resp.ok ? 'server: POST /card' : 'server: POST /card failed',
          resp.ok ? { taskId: taskId, card: number, message: 'Posted: CARD_UPDATED or CARD_FAILED follows.' } : data);
      });
    }).catch(function (err) { entry('server: POST /card failed', { message: err.message }); });
  }

  $('demo-form').addEventListener('submit', function (e) {
    e.preventDefault();
    showError('');
    var body = { type: $('type').value, external_user_id: $('external-user-id').value.trim() };
    var cardNumber = cardChoice ? $('demo-card').value : '';
    if ($('merchant').value) { body.merchant_id = Number($('merchant').value); }
    $('open').disabled = true;
    fetch('/demo/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      cache: 'no-store'
    }).then(function (resp) {
      return resp.json().then(function (data) {
        if (!resp.ok) { throw new Error(data.error_message || 'The session could not be created.'); }
        return data;
      });
    }).then(function (s) {
      $('session-info').textContent = 'Session ' + s.session_id + ' for ' + s.external_user_id + ' (' + body.type + ')';
      $('session-info').dataset.sessionId = s.session_id;
      $('direct-session').value = s.session;
      $('direct-client').value = s.client_id;
      entry('open', { product: body.type, session_id: s.session_id, external_user_id: s.external_user_id });
      new window.HitchLink().open({
        sessionId: s.session,
        clientId: s.client_id,
        environment: s.environment,
        entryPoint: 'demo',
        metadata: { source: 'demo' },
        onSuccess: function (success) {
          entry('onSuccess', success);
          if (cardChoice && body.type === 'card_switcher') { postCard(success && success.taskId, cardNumber); }
        },
        onError: function (error) { entry('onError', error); },
        onEvent: function (event) { entry('onEvent', event); },
        onExit: function (exit) { entry('onExit', exit); $('open').focus(); }
      });
    }).catch(function (err) {
      showError(err.message);
    }).then(function () {
      $('open').disabled = false;
    });
  });
})();
