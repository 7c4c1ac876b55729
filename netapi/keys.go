package netapi

import (
	"archive/tar"
	"bytes"
	"net/http"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// keys is /keys[/<mid>]: GET lists the keys (wheel key.list_all) or one
// key's fingerprint (key.finger); POST with eauth credentials and mid
// runs key.gen_accept and answers the new key pair as a tar file
// (minion.pub, minion.pem), the key being accepted already.
func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBody)
	p := strings.TrimRight(s.opts.RootPrefix, "/") + "/keys"
	mid := strings.Trim(strings.TrimPrefix(r.URL.Path, p), "/")
	switch r.Method {
	case http.MethodGet:
		s.wrap(func(r *http.Request) (any, error) {
			td, err := s.authenticate(r)
			if err != nil {
				return nil, err
			}
			c := payload.NewMap("client", "wheel", "fun", "key.list_all", "token", td.Str("token"))
			if mid != "" {
				c = payload.NewMap("client", "wheel", "fun", "key.finger", "match", mid, "token", td.Str("token"))
			}
			ret, err := s.runChunk(r.Context(), c)
			if err != nil {
				return nil, err
			}
			m, _ := ret.(*payload.Map)
			var out any = payload.NewMap()
			if d := m.Map("data"); d != nil {
				if v, ok := d.Get("return"); ok {
					out = v
				}
			}
			return payload.NewMap("return", out), nil
		})(w, r)
	case http.MethodPost:
		body, err := decodeBody(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		chunks, err := lowstate(body)
		if err != nil || len(chunks) == 0 {
			writeErrorPage(w, &httpError{code: http.StatusBadRequest, msg: "Lowstates must be a list"})
			return
		}
		c := chunks[0]
		c.Set("client", "wheel")
		c.Set("fun", "key.gen_accept")
		if v, ok := c.Delete("mid"); ok {
			c.Set("id_", v)
		}
		ret, err := s.runChunk(r.Context(), c)
		if err != nil {
			writeErr(w, err)
			return
		}
		m, _ := ret.(*payload.Map)
		var pub, priv string
		if d := m.Map("data"); d != nil {
			if rm := d.Map("return"); rm != nil {
				pub, priv = rm.Str("pub"), rm.Str("priv")
			}
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, f := range []struct{ name, data string }{{"minion.pub", pub}, {"minion.pem", priv}} {
			_ = tw.WriteHeader(&tar.Header{Name: f.name, Size: int64(len(f.data)), Mode: 0o600, Format: tar.FormatGNU})
			_, _ = tw.Write([]byte(f.data))
		}
		_ = tw.Close()
		h := w.Header()
		h.Set("Content-Disposition", `attachment; filename="saltkeys-`+payload.Text(mustGet(c, "id_"))+`.tar"`)
		h.Set("Content-Type", "application/x-tar")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(buf.Bytes())
	default:
		writeErrorPage(w, &httpError{code: http.StatusMethodNotAllowed})
	}
}

func writeErr(w http.ResponseWriter, err error) {
	if he, ok := err.(*httpError); ok {
		writeErrorPage(w, he)
		return
	}
	writeErrorPage(w, &httpError{code: http.StatusInternalServerError})
}
