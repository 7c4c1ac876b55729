package master

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// handleAuth answers _auth (SALT-WIRE §4): the decision comes from the key
// store; v2 replies are signed, v0/1 replies are not.
func (m *Master) handleAuth(load *payload.Map, version int64) ([]byte, bool) {
	signed := version > 1
	idV, ok := load.Get("id")
	if !ok {
		m.log.Debug("_auth without id: no reply")
		return nil, false
	}
	nonce := ""
	if signed {
		nv, ok := load.Get("nonce")
		if !ok {
			m.log.Debug("v2 _auth without nonce: no reply", "id", payload.Text(idV))
			return nil, false
		}
		nonce = payload.Text(nv)
	}
	id, _ := idV.(string)
	if !m.validID(id) {
		m.log.Info("authentication request from an invalid id", "id", payload.Text(idV))
		m.st.auth[2].Add(1)
		return m.authRefusal(false, nonce, signed)
	}
	if !load.Has("pub") {
		m.log.Debug("_auth without pub: no reply", "id", id)
		return nil, false
	}
	req := keys.AuthRequest{ID: id, Pub: load.Bytes("pub")}
	if g := load.Map("autosign_grains"); g != nil {
		req.AutosignGrains, _ = toGo(g).(map[string]any)
	}
	dec, err := m.keys.Authenticate(req)
	if err != nil {
		m.log.Error("authentication failed with an error: no reply", "id", id, "err", err)
		return nil, false
	}
	m.log.Info("authentication request", "id", id, "result", dec.Result.String(), "reason", dec.Reason)
	m.st.authResult(dec)
	if dec.Result != keys.AuthAccept {
		m.fireAuth(dec)
		return m.authRefusal(dec.Result.Ret(), nonce, signed)
	}
	sess := m.sess.Load()
	keySig, err := sess.keySig(m.priv)
	if err != nil {
		m.log.Error("cannot sign the session key: no reply", "id", id, "err", err)
		return nil, false
	}
	acc := message.AuthAccept{
		MasterPriv:   m.priv,
		MasterPubPEM: m.pubPEM,
		MinionPub:    dec.MinionPub,
		SessionKey:   sess.key,
		KeySig:       keySig,
		PublishPort:  m.publishPort,
		PubSig:       m.pubSig,
	}
	if load.Has("token") {
		acc.EncToken = load.Bytes("token")
	}
	if signed {
		acc.Nonce = nonce
	}
	inner, err := message.BuildAuthAccept(acc)
	if err != nil {
		m.log.Error("cannot build the auth reply: no reply", "id", id, "err", err)
		return nil, false
	}
	var out []byte
	if signed {
		out, err = message.EncodeSignedClear(m.priv, inner)
	} else {
		out, err = message.EncodeClearReply(inner)
	}
	if err != nil {
		m.log.Error("cannot encode the auth reply: no reply", "id", id, "err", err)
		return nil, false
	}
	m.fireAuth(dec)
	return out, true
}

// authRefusal builds {ret, nonce} signed (v2) or {enc: clear, load: {ret}}.
func (m *Master) authRefusal(ret any, nonce string, signed bool) ([]byte, bool) {
	if !signed {
		return clearReply(payload.NewMap("enc", message.EncClear, "load", payload.NewMap("ret", ret))), true
	}
	out, err := message.EncodeSignedClear(m.priv, message.BuildAuthRefusal(ret, nonce))
	if err != nil {
		m.log.Error("cannot sign the auth reply: no reply", "err", err)
		return nil, false
	}
	return out, true
}

// fireAuth fires the salt/auth event of a decision (auth_events).
func (m *Master) fireAuth(dec keys.AuthDecision) {
	if dec.Event == nil || !m.cfg.AuthEvents {
		return
	}
	data := payload.NewMap()
	for _, k := range []string{"result", "act", "id", "pub"} {
		if v, ok := dec.Event[k]; ok {
			data.Set(k, v)
		}
	}
	for k, v := range dec.Event {
		if !data.Has(k) {
			data.Set(k, payload.FromGo(v))
		}
	}
	m.fire(keys.TagAuth, data)
}

// masterPubSig returns the pub_sig of auth replies when master_sign_pubkey
// is on: the master_pubkey_signature file when master_use_pubkey_signature
// is set, else base64(sign(master_sign.pem, master.pub)) + "\n", creating
// the signing key pair when it is missing, as Salt does.
func masterPubSig(cfg *config.Master, pubPEM []byte) (string, error) {
	if cfg.MasterUsePubkeySignature {
		name := cfg.MasterPubkeySignature
		if name == "" {
			name = "master_pubkey_signature"
		}
		b, err := os.ReadFile(filepath.Join(cfg.PKIDir, name))
		if err != nil {
			return "", fmt.Errorf("master: master_pubkey_signature: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	name := cfg.MasterSignKeyName
	if name == "" {
		name = "master_sign"
	}
	pemPath := filepath.Join(cfg.PKIDir, name+".pem")
	priv, err := crypt.LoadPrivateKey(pemPath)
	if errors.Is(err, os.ErrNotExist) {
		priv, err = crypt.WriteKeyPair(cfg.PKIDir, name, cfg.KeySize)
	}
	if err != nil {
		return "", fmt.Errorf("master: signing key %s: %w", pemPath, err)
	}
	sig, err := crypt.Sign(priv, pubPEM)
	if err != nil {
		return "", fmt.Errorf("master: pub_sig: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig) + "\n", nil
}

// toGo converts a payload value into plain Go maps and slices (for APIs
// that take map[string]any).
func toGo(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		if x == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, x.Len())
		x.Range(func(k, v any) bool {
			out[payload.KeyString(k)] = toGo(v)
			return true
		})
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toGo(e)
		}
		return out
	}
	return v
}
