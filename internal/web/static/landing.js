// The landing page. A browser that does not send Sec-Fetch-Dest gets this
// page, rather than the flow, in the frame that knotapi-js opens at the
// root of its host (docs/link.md): a framed copy moves on to the flow,
// which the SDK initialises when the frame loads again.
(function () {
  'use strict';
  if (window.parent !== window) { window.location.replace('/link'); }
})();
