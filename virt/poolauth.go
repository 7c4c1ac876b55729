package virt

import (
	"encoding/base64"
	"fmt"
	"log/slog"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// Pool authentication like Salt 3006's _pool_set_secret: a source_auth
// with username and password on an rbd or iscsi pool gets a libvirt
// secret (usage pool_<name> unless the pool already names one) holding
// the password, and the pool references it.

// poolSecretTypes maps the pool types with authentication to the auth
// type of their secret.
var poolSecretTypes = map[string]string{"rbd": "ceph", "iscsi": "chap", "iscsi-direct": "chap"}

func secretUsageType(authType string) int {
	if authType == "ceph" {
		return SecretUsageCeph
	}
	return SecretUsageISCSI
}

// secretXML is the secret definition Salt's libvirt_secret template
// renders.
func secretXML(authType, usage, description string) string {
	var w xw
	w.line("<secret ephemeral='no' private='yes'>")
	w.line("  <description>%s</description>", esc(description))
	switch authType {
	case "chap":
		w.line("  <usage type='iscsi'>")
		w.line("    <target>%s</target>", esc(usage))
		w.line("  </usage>")
	case "ceph":
		w.line("  <usage type='ceph'>")
		w.line("    <name>%s</name>", esc(usage))
		w.line("  </usage>")
	}
	w.line("</secret>")
	return w.String()
}

// poolSetSecret returns the source_auth to render in the pool XML,
// creating or updating the libvirt secret when a password is given. The
// secret it created is returned too, so that a failed pool definition can
// remove it.
func poolSetSecret(conn Conn, ptype, pool string, sourceAuth any, uuid, usage string, test bool) (*payload.Map, Secret, error) {
	auth := asMap(sourceAuth)
	if sourceAuth != nil && auth == nil {
		return nil, nil, fmt.Errorf("%w: source_auth must be a dictionary", modules.ErrInvocation)
	}
	secretType := poolSecretTypes[ptype]
	if auth == nil || !auth.Has("username") || !auth.Has("password") || secretType == "" {
		return auth, nil, nil
	}
	auth = auth.Clone()
	var (
		secret  Secret
		created Secret
		err     error
	)
	switch {
	case usage != "":
		secret, err = conn.SecretByUsage(secretUsageType(secretType), usage)
	case uuid != "":
		secret, err = conn.SecretByUUID(uuid)
	}
	if err != nil {
		slog.Info("Secret not found", "err", err)
		secret = nil
	}
	if secret == nil {
		if usage == "" {
			usage = "pool_" + pool
		}
		if !test {
			if secret, err = conn.DefineSecret(secretXML(secretType, usage, fmt.Sprintf("Passphrase for %s pool created by Salt", pool))); err != nil {
				return nil, nil, err
			}
			created = secret
		}
	}
	password := []byte(payload.Text(val(auth, "password")))
	if ptype == "rbd" {
		// RBD passwords come base64-encoded; libvirt encodes them again.
		dec, derr := base64.StdEncoding.DecodeString(string(password))
		if derr != nil {
			if created != nil {
				_ = created.Undefine()
			}
			return nil, nil, fmt.Errorf("%w: the rbd password must be base64-encoded: %w", modules.ErrInvocation, derr)
		}
		password = dec
	}
	if !test {
		if err := secret.SetValue(password); err != nil {
			if created != nil {
				_ = created.Undefine()
			}
			return nil, nil, err
		}
	}
	auth.Set("type", secretType)
	if uuid != "" {
		auth.Set("secret", payload.NewMap("type", "uuid", "value", uuid))
	} else {
		auth.Set("secret", payload.NewMap("type", "usage", "value", usage))
	}
	return auth, created, nil
}

// writePoolAuth renders the template's <auth> element.
func writePoolAuth(w *xw, auth *payload.Map) error {
	sec := asMap(val(auth, "secret"))
	if sec == nil || !payload.Truthy(val(sec, "type")) {
		return fmt.Errorf("%w: source_auth needs a password or a secret dictionary with type and value", modules.ErrInvocation)
	}
	w.line("    <auth type='%s' username='%s'>", esc(val(auth, "type")), esc(val(auth, "username")))
	w.line("      <secret %s='%s'/>", esc(val(sec, "type")), esc(val(sec, "value")))
	w.line("    </auth>")
	return nil
}

// undefinePoolSecret removes the secret pool_define created for the pool
// (usage pool_<name>) before the pool goes, like Salt's pool_undefine.
func undefinePoolSecret(conn Conn, p Pool, name string) error {
	x, err := p.XML()
	if err != nil {
		return err
	}
	desc, err := parseXML(x)
	if err != nil {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	authNode := desc.find("source/auth")
	if authNode == nil {
		return nil
	}
	var usageType int
	switch authNode.attr("type") {
	case "ceph":
		usageType = SecretUsageCeph
	case "chap":
		usageType = SecretUsageISCSI
	default:
		return nil
	}
	usage := authNode.find("secret").attr("usage")
	if usage != "pool_"+name {
		return nil
	}
	s, err := conn.SecretByUsage(usageType, usage)
	if err != nil {
		return err
	}
	return s.Undefine()
}
