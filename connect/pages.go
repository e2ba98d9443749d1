package connect

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
)

//go:embed pages/page.html
var pageFiles embed.FS

// pageTemplate is every page the flow shows: html/template escapes what
// goes in by construction, and nothing that goes in is a secret, a state
// or a token.
var pageTemplate = template.Must(template.ParseFS(pageFiles, "pages/page.html"))

// page is one page a person sees at the end of a step.
type page struct {
	OK      bool
	Heading string
	// What happened and what to do.
	What, Fix string
}

// securityHeaders are sent with every answer of the flow: nothing is
// cached, no Referer carries a link's ticket to another site, the page
// loads nothing and may not be framed.
func securityHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
}

// render writes p with status.
func render(w http.ResponseWriter, status int, p page) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	b.WriteTo(w)
}
