package web

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
)

// cspLanding is the landing page's policy. It names no frame-ancestors:
// the page holds nothing but links, and a browser that does not send
// Sec-Fetch-Dest gets it inside knotapi-js's frame, where landing.js
// moves the frame on to the flow.
const cspLanding = cspBase

// frameDests are the Sec-Fetch-Dest values of a document loaded into a
// frame.
var frameDests = []string{"iframe", "frame"}

// root serves the deployment's root. knotapi-js opens its flow at the root
// of its own host, without a query (docs/link.md, "knotapi-js unchanged"):
// when an operator points that host at Hitch, a frame's request gets the
// flow, as /link serves it. Any other request gets the landing page.
func (h *Handler) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Sec-Fetch-Dest")
	if slices.Contains(frameDests, r.Header.Get("Sec-Fetch-Dest")) {
		h.link(w, r)
		return
	}
	pageHeaders(w, cspLanding)
	_, _ = w.Write(h.landingPage)
}

type landingData struct {
	Development bool
	Demo        bool
	Dashboard   bool
	Docs        []doc
}

// doc is one of the documents served at /docs/.
type doc struct {
	File  string
	Title string
}

// loadDocs reads the Markdown documents of cfg.Docs, served as text at
// /docs/{file}, with their titles (their first heading) for the landing
// page, in file name order.
func (h *Handler) loadDocs(docs fs.FS) ([]doc, error) {
	if docs == nil {
		return nil, nil
	}
	names, err := fs.Glob(docs, "*.md")
	if err != nil {
		return nil, fmt.Errorf("web: docs: %w", err)
	}
	out := make([]doc, 0, len(names))
	for _, name := range names {
		b, err := fs.ReadFile(docs, name)
		if err != nil {
			return nil, fmt.Errorf("web: docs: %w", err)
		}
		sum := sha256.Sum256(b)
		h.docs[name] = &asset{body: b, contentType: "text/plain; charset=utf-8",
			etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		out = append(out, doc{File: name, Title: docTitle(b, name)})
	}
	return out, nil
}

// docTitle is the text of a document's first line if it is a heading,
// else its file name without the extension.
func docTitle(b []byte, name string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if sc.Scan() {
		if title, ok := strings.CutPrefix(sc.Text(), "# "); ok && strings.TrimSpace(title) != "" {
			return strings.TrimSpace(title)
		}
	}
	return strings.TrimSuffix(name, path.Ext(name))
}

// docFile serves one document as plain text: Markdown reads well as it is.
func (h *Handler) docFile(w http.ResponseWriter, r *http.Request) {
	a, ok := h.docs[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	h.serveAsset(w, r, a)
}
