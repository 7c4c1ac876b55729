package netapi

import (
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// defaultAppPage is served at app_path when rest_cherrypy:app is not set
// (Salt serves a small page of its own there).
const defaultAppPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>gsalt-api</title></head>
<body><p>gsalt-api is running. Set <code>rest_cherrypy:app</code> to the
HTML file of a single-page app (SaltGUI's index.html, for example) and
<code>rest_cherrypy:static</code> to its assets to serve them here.</p></body></html>
`

// routeApp adds app_path (the single-page app: the same file whatever
// follows the path, for the HTML5 history API) and, when static is set,
// static_path (files below the static directory). Neither needs a token,
// as in Salt.
func (s *Server) routeApp(mux *http.ServeMux, prefix string) {
	if ap := strings.TrimRight(s.opts.AppPath, "/"); ap != "" {
		p := prefix + "/" + strings.TrimLeft(ap, "/")
		mux.HandleFunc(p, s.app)
		mux.HandleFunc(p+"/", s.app)
	}
	if s.opts.Static != "" {
		sp := prefix + "/" + strings.Trim(s.opts.StaticPath, "/")
		mux.Handle(sp+"/", http.StripPrefix(sp, noDirListing(http.FileServer(http.Dir(s.opts.Static)))))
	}
}

// app serves rest_cherrypy:app (or the default page).
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeErrorPage(w, &httpError{code: http.StatusMethodNotAllowed})
		return
	}
	if s.opts.App == "" {
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		_, _ = w.Write([]byte(defaultAppPage))
		return
	}
	f, err := os.Open(s.opts.App)
	if err != nil {
		writeErrorPage(w, &httpError{code: http.StatusNotFound, msg: "The path '" + r.URL.Path + "' was not found."})
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		writeErrorPage(w, &httpError{code: http.StatusNotFound, msg: "The path '" + r.URL.Path + "' was not found."})
		return
	}
	if ct := mime.TypeByExtension(filepath.Ext(s.opts.App)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	http.ServeContent(w, r, filepath.Base(s.opts.App), st.ModTime(), f)
}

// noDirListing answers 404 for directories, as CherryPy's staticdir does
// without an index.
func noDirListing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			writeErrorPage(w, &httpError{code: http.StatusNotFound, msg: "The path '" + r.URL.Path + "' was not found."})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// htmlOverride is Salt's html_override tool: with app set, a browser
// asking for text/html (and not just */*) anywhere outside app_path and
// static_path gets the app, so client-side routes survive a reload.
func (s *Server) htmlOverride(next http.Handler, prefix string) http.Handler {
	if s.opts.App == "" {
		return next
	}
	skip := []string{prefix + s.opts.AppPath, prefix + s.opts.StaticPath}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept := r.Header.Get("Accept")
		if r.Method == http.MethodGet && accept != "*/*" && prefersHTML(accept) {
			inSkip := false
			for _, p := range skip {
				if strings.HasPrefix(r.URL.Path, p) {
					inSkip = true
				}
			}
			if !inSkip {
				s.app(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// prefersHTML is cherrypy.lib.cptools.accept("text/html") == "text/html":
// the Accept header lists text/html (or text/*) with a non-zero quality,
// or there is no Accept header at all.
func prefersHTML(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(strings.TrimSpace(part), ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		if mt != "text/html" && mt != "text/*" {
			continue
		}
		zero := false
		for _, f := range fields[1:] {
			f = strings.ReplaceAll(strings.TrimSpace(f), " ", "")
			if f == "q=0" || f == "q=0.0" || f == "q=0.00" || f == "q=0.000" {
				zero = true
			}
		}
		if !zero {
			return true
		}
	}
	return false
}
