// Fills the js_proof field of forms that carry a challenge (the sign-in
// form): rounds of FNV-1a over the challenge, the same as jsProof in
// shop.go. A client that does not run the page's script cannot sign in.
(function () {
  'use strict';

  function proof(challenge) {
    var h = 0x811c9dc5;
    for (var round = 0; round < 500; round++) {
      var s = challenge + ':' + round;
      for (var i = 0; i < s.length; i++) {
        h ^= s.charCodeAt(i);
        h = Math.imul(h, 0x01000193) >>> 0;
      }
    }
    return ('0000000' + h.toString(16)).slice(-8);
  }

  function fill() {
    document.querySelectorAll('form[data-challenge]').forEach(function (form) {
      var field = form.querySelector('input[name="js_proof"]');
      if (field) {
        field.value = proof(form.getAttribute('data-challenge'));
      }
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', fill);
  } else {
    fill();
  }
})();
