package browser

import (
	"context"
	"encoding/json"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// maskJS masks the page for a screenshot. It replaces every secret in text
// nodes, attributes and input values, and blanks password, card and
// one-time-code fields even when their value is no known secret. It records
// how to undo each change in globalThis.__hitchUnmask of its world.
//
// Input values are masked before attributes: setting the value first makes the
// field keep it, so restoring the value attribute later cannot overwrite it.
const maskJS = `(function (secrets) {
	"use strict";
	const MASK = "•••";
	secrets = secrets.filter((s) => s !== "").sort((a, b) => b.length - a.length);
	const scrub = (v) => {
		for (const s of secrets) v = v.split(s).join(MASK);
		return v;
	};
	const sensitive = (el) => {
		const type = (el.getAttribute("type") || "").toLowerCase();
		const ac = (el.getAttribute("autocomplete") || "").toLowerCase();
		const name = ((el.getAttribute("name") || "") + " " + el.id).toLowerCase();
		return type === "password" ||
			/\bcc-|one-time-code|password/.test(ac) ||
			/card|cvv|cvc|ccnum|cc-?(num|csc|exp)|otp|passw/.test(name);
	};
	const undo = [];
	const visit = (root) => {
		const doc = root.ownerDocument || root;
		const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			const v = n.nodeValue, m = scrub(v);
			if (m !== v) {
				const node = n;
				undo.push(() => { node.nodeValue = v; });
				node.nodeValue = m;
			}
		}
		for (const el of root.querySelectorAll("*")) {
			if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") {
				const v = el.value;
				if (v !== "" && (sensitive(el) || scrub(v) !== v)) {
					undo.push(() => { el.value = v; });
					el.value = MASK;
				}
			}
			for (const a of Array.from(el.attributes)) {
				const v = a.value, m = scrub(v), name = a.name;
				if (m !== v) {
					undo.push(() => el.setAttribute(name, v));
					el.setAttribute(name, m);
				}
			}
			if (el.shadowRoot) visit(el.shadowRoot);
			if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
				try {
					const d = el.contentDocument;
					if (d && d.documentElement) visit(d.documentElement);
				} catch (e) {
					// A cross-origin frame cannot be reached.
				}
			}
		}
	};
	visit(document.documentElement);
	globalThis.__hitchUnmask = () => {
		for (let i = undo.length - 1; i >= 0; i--) {
			try { undo[i](); } catch (e) {}
		}
		delete globalThis.__hitchUnmask;
	};
	return undo.length;
})`

// maskWorld is the name of the isolated world that masks pages. An isolated
// world shares the DOM with the page but not its JavaScript globals, so the
// page's own scripts never see the secrets passed in.
const maskWorld = "hitch-mask"

// maskPage masks the secrets in the page of the target and returns the
// isolated world that can undo it with unmaskPage.
func maskPage(secrets []string) chromedp.Action[runtime.ExecutionContextID] {
	return func(ctx context.Context, t *chromedp.Target) (runtime.ExecutionContextID, error) {
		tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return 0, err
		}
		world, err := cdp.Call(ctx, t, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
			FrameID:   tree.FrameTree.Frame.ID,
			WorldName: maskWorld,
		})
		if err != nil {
			return 0, err
		}
		if secrets == nil {
			secrets = []string{}
		}
		arg, err := json.Marshal(secrets)
		if err != nil {
			return 0, err
		}
		if err := evaluateIn(ctx, t, world.ExecutionContextID, maskJS+"("+string(arg)+")"); err != nil {
			return 0, err
		}
		return world.ExecutionContextID, nil
	}
}

// unmaskPage undoes maskPage.
func unmaskPage(world runtime.ExecutionContextID) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		return evaluateIn(ctx, t, world, `globalThis.__hitchUnmask && globalThis.__hitchUnmask()`)
	})
}

// evaluateIn runs the expression in the execution context id.
func evaluateIn(ctx context.Context, t *chromedp.Target, id runtime.ExecutionContextID, expr string) error {
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    expr,
		ContextID:     id,
		ReturnByValue: new(true),
	})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails}
	}
	return nil
}
