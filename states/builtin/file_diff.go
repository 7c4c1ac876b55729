package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// fileUnifiedDiff is Python's difflib.unified_diff(a, b, fromfile, tofile,
// n=3, lineterm=lineterm): it returns the pieces the generator yields, so
// callers join them as Salt does ("".join for get_diff, "\n".join in
// file.append). The matching itself is go-difflib's SequenceMatcher, a
// faithful port of Python's (autojunk included); the rendering is ours
// because go-difflib's WriteUnifiedDiff leaves out the "--- " and "+++ "
// header lines when both file names are empty, which Python never does
// (see TestGoDifflibWriterDiffers).
func fileUnifiedDiff(a, b []string, fromfile, tofile, lineterm string) []string {
	m := difflib.NewMatcher(a, b)
	var out []string
	for i, g := range m.GetGroupedOpCodes(3) {
		if i == 0 {
			out = append(out, "--- "+fromfile+lineterm, "+++ "+tofile+lineterm)
		}
		first, last := g[0], g[len(g)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@%s", fileUnifiedRange(first.I1, last.I2), fileUnifiedRange(first.J1, last.J2), lineterm))
		for _, c := range g {
			if c.Tag == 'e' {
				for _, l := range a[c.I1:c.I2] {
					out = append(out, " "+l)
				}
				continue
			}
			if c.Tag == 'r' || c.Tag == 'd' {
				for _, l := range a[c.I1:c.I2] {
					out = append(out, "-"+l)
				}
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				for _, l := range b[c.J1:c.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return out
}

// fileUnifiedRange is difflib's _format_range_unified.
func fileUnifiedRange(start, stop int) string {
	beginning := start + 1
	length := stop - start
	if length == 1 {
		return fmt.Sprint(beginning)
	}
	if length == 0 {
		beginning--
	}
	return fmt.Sprintf("%d,%d", beginning, length)
}

// fileDecodeLine is salt.utils.data.decode with ("utf-8", "latin-1"): valid
// UTF-8 stays, anything else is read as Latin-1.
func fileDecodeLine(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// fileSaltDiff is salt.utils.stringutils.get_diff(a, b): the joined unified
// diff of the decoded lines, without file names.
func fileSaltDiff(a, b []string) string {
	da := make([]string, len(a))
	for i, l := range a {
		da[i] = fileDecodeLine(l)
	}
	db := make([]string, len(b))
	for i, l := range b {
		db[i] = fileDecodeLine(l)
	}
	return strings.Join(fileUnifiedDiff(da, db, "", "", "\n"), "")
}

// fileIsTextBlock is salt.utils.files.is_text on a block (the first 512 bytes
// of a file): no NUL, and valid UTF-8 or at most 30% non-text bytes.
func fileIsTextBlock(block []byte) bool {
	if bytes.IndexByte(block, 0) >= 0 {
		return false
	}
	if len(block) == 0 || utf8.Valid(block) {
		return true
	}
	nontext := 0
	for _, c := range block {
		if (c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\b' {
			continue
		}
		nontext++
	}
	return float64(nontext)/float64(len(block)) <= 0.30
}

// fileIsTextFile is salt.utils.files.is_text(path); an unreadable file is not
// text.
func fileIsTextFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	return fileIsTextBlock(buf[:n])
}

// fileBinaryReplace is salt.modules.file._binary_replace.
func fileBinaryReplace(oldPath, newPath string) string {
	oldBin, newBin := !fileIsTextFile(oldPath), !fileIsTextFile(newPath)
	switch {
	case oldBin && newBin:
		return "Replace binary file"
	case oldBin:
		return "Replace binary file with text file"
	case newBin:
		return "Replace text file with binary file"
	}
	return ""
}

// errFileDiffCache is get_diff's "Failed to cache one or more files".
var errFileDiffCache = errors.New("Failed to cache one or more files")

// fileDiffOptions are get_diff's switches.
type fileDiffOptions struct {
	showChanges bool
	template    bool
	obfuscate   bool
}

// fileGetDiff is salt.modules.file.get_diff(file1, file2, show_filenames=False)
// for local files: "" when the contents are equal.
func fileGetDiff(file1, file2 string, o fileDiffOptions) (string, error) {
	d1, err1 := os.ReadFile(file1)
	d2, err2 := os.ReadFile(file2)
	if err1 != nil || err2 != nil {
		return "", errFileDiffCache
	}
	if bytes.Equal(d1, d2) {
		return "", nil
	}
	switch {
	case o.template && o.obfuscate:
		return "<Obfuscated Template>", nil
	case !o.showChanges:
		return "<show_changes=False>", nil
	}
	if b := fileBinaryReplace(file1, file2); b != "" {
		return b, nil
	}
	return fileSaltDiff(fileSplitBinaryLines(string(d1)), fileSplitBinaryLines(string(d2))), nil
}
