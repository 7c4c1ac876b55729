package keys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/crypt"
)

// ANSI sequences of Salt's colour theme (salt.utils.color.get_colors): every
// sequence starts with a reset, ENDC is "\x1b[0;0m".
const (
	ansiEnd          = "\x1b[0;0m"
	ansiRed          = "\x1b[0;31m"
	ansiLightRed     = "\x1b[0;1;31m"
	ansiGreen        = "\x1b[0;32m"
	ansiLightGreen   = "\x1b[0;1;32m"
	ansiBlue         = "\x1b[0;34m"
	ansiLightBlue    = "\x1b[0;1;34m"
	ansiMagenta      = "\x1b[0;35m"
	ansiLightMagenta = "\x1b[0;1;35m"
	ansiCyan         = "\x1b[0;36m"
)

// stateColors returns the item and heading colours salt/output/key.py uses.
func stateColors(s State) (item, title string) {
	switch s {
	case StatePending:
		return ansiRed, ansiLightRed
	case StateAccepted:
		return ansiGreen, ansiLightGreen
	case StateRejected:
		return ansiBlue, ansiLightBlue
	default: // denied, local
		return ansiMagenta, ansiLightMagenta
	}
}

// FormatKeys renders a Listing exactly as salt-key prints it with its "key"
// outputter: groups sorted by Salt's status name (so Local, Accepted,
// Denied, Unaccepted, Rejected), each a heading line followed by one line
// per id in code point order ("id" for lists, "id:  value" for
// dictionaries), ESC characters in ids shown as "?", the whole text
// right-stripped and ended with one newline. It returns "" when there is
// nothing to print (salt-key then prints nothing at all). With color the
// lines carry Salt's ANSI colours; pass false when stdout is not a
// terminal or --no-color is given.
func FormatKeys(l Listing, color bool) string {
	groups := append(Listing(nil), l...)
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].State.Name() < groups[j].State.Name() })
	end := ""
	if color {
		end = ansiEnd
	}
	var b strings.Builder
	for _, g := range groups {
		item, title := "", ""
		if color {
			item, title = stateColors(g.State)
		}
		b.WriteString(title + g.State.Title() + end + "\n")
		idx := make([]int, len(g.IDs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, c int) bool { return g.IDs[idx[a]] < g.IDs[idx[c]] })
		for _, i := range idx {
			id := strings.ReplaceAll(g.IDs[i], "\x1b", "?")
			if g.IsDict() {
				v := ""
				if i < len(g.Values) {
					v = g.Values[i]
				}
				b.WriteString(item + id + ":  " + v + end + "\n")
			} else {
				b.WriteString(item + id + end + "\n")
			}
		}
	}
	return printed(b.String())
}

// printed applies salt's display_output: rstrip the text, print it with a
// newline, print nothing when empty.
func printed(s string) string {
	s = strings.TrimRightFunc(s, pyIsSpace)
	if s == "" {
		return ""
	}
	return s + "\n"
}

// FormatJSON renders a Listing as salt-key --out json prints it: Python's
// json.dumps(indent=4, ensure_ascii=False) in the Listing's order, plus
// the newline print adds. Lists become arrays, dictionaries objects.
func FormatJSON(l Listing) string {
	if len(l) == 0 {
		return "{}\n"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for gi, g := range l {
		b.WriteString("    " + jsonString(g.State.Name()) + ": ")
		switch {
		case g.IsDict() && len(g.IDs) == 0:
			b.WriteString("{}")
		case g.IsDict():
			b.WriteString("{\n")
			for i, id := range g.IDs {
				v := ""
				if i < len(g.Values) {
					v = g.Values[i]
				}
				b.WriteString("        " + jsonString(id) + ": " + jsonString(v))
				if i < len(g.IDs)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString("    }")
		case len(g.IDs) == 0:
			b.WriteString("[]")
		default:
			b.WriteString("[\n")
			for i, id := range g.IDs {
				b.WriteString("        " + jsonString(id))
				if i < len(g.IDs)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString("    ]")
		}
		if gi < len(l)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.String()
}

// jsonString quotes s like Python's json module with ensure_ascii=False
// (salt-key's json output).
func jsonString(s string) string { return pyfmt.JSONString(s, false) }

// pastTense is salt-key's "{}ed".format(cmd.rstrip("e")).
func pastTense(act Act) string {
	return strings.TrimRight(string(act), "e") + "ed"
}

// FormatGoingTo is the line salt-key prints before listing the keys an
// action will touch: "The following keys are going to be accepted:".
func FormatGoingTo(act Act) string {
	return "The following keys are going to be " + pastTense(act) + ":\n"
}

// ProceedPrompt returns salt-key's confirmation prompt for act and the
// answer an empty reply means: "Proceed? [N/y] " (no) for delete,
// "Proceed? [n/Y] " (yes) otherwise. Salt proceeds when the answer
// starts with "y" or "Y".
func ProceedPrompt(act Act) (prompt string, defaultYes bool) {
	if act == ActDelete {
		return "Proceed? [N/y] ", false
	}
	return "Proceed? [n/Y] ", true
}

// FormatDone renders the "Key for minion <id> accepted." lines salt-key
// prints after acting, one per id of l in order. For accept and reject
// pass Outcome.After; for delete salt-key reports the list it showed
// before deleting.
func FormatDone(act Act, l Listing) string {
	var b strings.Builder
	for _, g := range l {
		for _, id := range g.IDs {
			fmt.Fprintf(&b, "Key for minion %s %s.\n", id, pastTense(act))
		}
	}
	return b.String()
}

// FormatNoMatch is salt-key's message when a glob matches nothing it may
// act on: "The key glob 'x' does not match any unaccepted keys." naming
// the included states ("unaccepted, accepted or denied"). match is the
// glob as given on the command line; inc should come from CLIInclude.
func FormatNoMatch(match string, inc Include) string {
	states := []string{"unaccepted"}
	if inc.Accepted {
		states = append(states, "accepted")
	}
	if inc.Rejected {
		states = append(states, "rejected")
	}
	if inc.Denied {
		states = append(states, "denied")
	}
	s := states[0]
	if len(states) > 1 {
		s = strings.Join(states[:len(states)-1], ", ") + " or " + states[len(states)-1]
	}
	return fmt.Sprintf("The key glob '%s' does not match any %s keys.\n", match, s)
}

// FormatInvalid is what salt-key writes to stderr for a key Accept found
// invalid.
func FormatInvalid(id string) string {
	return fmt.Sprintf("Unable to accept invalid key for %s.\n", id)
}

// FormatGenKeys renders the fingerprint salt-key --gen-keys prints (its
// "nested" output of {"return": fp}).
func FormatGenKeys(fp string, color bool) string {
	if color {
		return ansiCyan + "return" + ansiEnd + ":\n    " + ansiGreen + fp + ansiEnd + "\n"
	}
	return "return:\n    " + fp + "\n"
}

// FormatGenKeysJSON renders salt-key --gen-keys --out json.
func FormatGenKeysJSON(fp string) string {
	return "{\n    \"return\": " + jsonString(fp) + "\n}\n"
}

// GenKeys writes a new key pair dir/name.pem (mode 0400) and dir/name.pub
// (mode 0644) like salt-key --gen-keys NAME --gen-keys-dir DIR (bits 0
// means 2048; salt-key itself refuses sizes outside 2048..32768), creating
// dir when missing, and returns the sha256 fingerprint of name.pub. As in
// Salt an existing name.pem is kept: nothing is written and the
// fingerprint of the existing name.pub is returned ("" if there is none).
func GenKeys(name, dir string, bits int) (string, error) {
	if !safeName(name) {
		return "", fmt.Errorf("%w: key name %q", ErrInvalidID, name)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("keys: gen-keys dir %s: %w", dir, err)
	}
	if _, err := crypt.WriteKeyPair(dir, name, bits); err != nil && !errors.Is(err, crypt.ErrKeyExists) {
		return "", err
	}
	fp, err := crypt.FingerprintFile(filepath.Join(dir, name+".pub"), crypt.DefaultFingerprintHash)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	return fp, nil
}
